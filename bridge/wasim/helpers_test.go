package wasim_test

import (
	"os"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
)

// testKeepAlive is the heartbeat interval whose keepalive cadence the tests
// use: a ping every 2-3 s that fails after 1.5 s, so a ghost connection is
// noticed within about 4.5 s.
const testKeepAlive = 3 * time.Second

// The simulator replaces whatsmeow's root key, and the tests its keepalive
// timings, which must happen before any client goroutine starts.
func TestMain(m *testing.M) {
	wasim.Install()
	whatsapp.TuneKeepAlive(testKeepAlive)
	os.Exit(m.Run())
}
