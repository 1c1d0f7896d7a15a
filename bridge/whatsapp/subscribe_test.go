package whatsapp

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/contract"
)

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
		deadline := time.After(20 * time.Second)
		for {
			select {
			case <-changes:
				if ok() {
					return
				}
			case <-deadline:
				t.Fatalf("no signal for %s; status %+v", what, r.Status())
			}
		}
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
