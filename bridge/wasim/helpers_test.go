package wasim_test

import (
	"os"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// The simulator replaces whatsmeow's root key and keepalive timings, which
// must happen before any client goroutine starts.
func TestMain(m *testing.M) {
	wasim.Install()
	os.Exit(m.Run())
}
