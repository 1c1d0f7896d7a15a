package session

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// A subscriber hears the link attempt's first QR code and the link itself,
// and sees CurrentQR follow; after unsubscribing it hears nothing more.
func TestSubscribeSignalsQRAndStatusChanges(t *testing.T) {
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	changes, unsubscribe := r.Subscribe()
	if qr, _ := r.CurrentQR(); qr != "" {
		t.Fatal("CurrentQR before any link attempt")
	}
	// waitSignal waits for a signal after which ok holds; signals may merge.
	waitSignal := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for !ok() {
			select {
			case <-changes:
			case <-deadline:
				t.Fatalf("no signal for %s; status %+v", what, r.Status())
			}
		}
	}
	qr, err := r.QR(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	waitSignal("the QR code", func() bool {
		cur, at := r.CurrentQR()
		return cur == qr && !at.IsZero() && r.Status().State == StatePairing
	})
	if _, err := sim.Phone(account).ScanQR(context.Background(), qr); err != nil {
		t.Fatal(err)
	}
	waitSignal("connected", func() bool {
		cur, _ := r.CurrentQR()
		return r.Status().Connected() && cur == ""
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
