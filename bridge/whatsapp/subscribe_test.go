package whatsapp

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// liveStatus formats m's status when a failure message is built, not when
// the wait began.
type liveStatus struct{ m *Session }

func (s liveStatus) String() string { return fmt.Sprintf("%+v", s.m.Status()) }

// A subscriber hears the link attempt's start and the link itself, and
// sees CurrentQR follow; after unsubscribing it hears nothing more. (That a
// QR rotation alone signals is asserted by the dashboard's browser test,
// which sees the rotated code pushed well within the stream's refresh tick.)
func TestSubscribeSignalsQRAndStatusChanges(t *testing.T) {
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	changes, unsubscribe := r.Subscribe()
	if cur := r.CurrentQR(); cur != (bridge.LinkQR{}) {
		t.Fatalf("CurrentQR before any link attempt: %+v", cur)
	}
	// signalled requires a signal after which ok holds (signals merge, so
	// ok is checked after each one).
	signalled := func(what string, ok func() bool) {
		t.Helper()
		testutil.Receive(t, 20*time.Second, changes, func(struct{}) bool { return ok() }, "no signal for %s; status %s", what, liveStatus{r.Session})
	}
	qr, err := r.QR(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	signalled("the QR code", func() bool {
		cur := r.CurrentQR()
		return cur.Code == qr && !cur.Since.IsZero() && cur.Attempt == 1 && r.Status().State == contract.StatePairing
	})
	if _, err := sim.Phone(account).ScanQR(context.Background(), qr); err != nil {
		t.Fatal(err)
	}
	signalled("connected", func() bool {
		return r.Status().Connected() && r.CurrentQR() == bridge.LinkQR{}
	})

	unsubscribe()
	for len(changes) > 0 {
		<-changes
	}
	r.notify()
	if len(changes) != 0 {
		t.Error("a signal after unsubscribing")
	}
}
