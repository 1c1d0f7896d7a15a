package media

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// A download that found no session (as every pending one does just after a
// restart) starts as soon as the session connects, not at its next look
// 30 s later.
func TestDeferredDownloadStartsWhenTheSessionConnects(t *testing.T) {
	fx := newFixture(t)
	id := fx.register("wa-after-restart", []byte("photo"))
	fx.src.set(func(f *fakeSource) { f.errs["src-wa-after-restart"] = []error{bridge.ErrNotLinked} })
	fx.run()
	testutil.Eventually(t, 10*time.Second, func() bool { return fx.state(id).err == causeNotLinked }, "the download was never deferred")
	// The fixture's clock stands still: without SessionConnected the
	// deferred download would wait for the clock to pass notLinkedDelay.
	if err := fx.dl.SessionConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	fx.waitState(id, stateDone)
}
