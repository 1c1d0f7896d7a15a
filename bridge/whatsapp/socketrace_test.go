package whatsapp

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// hold makes Incoming report each message's id on the returned channel and
// wait until release is closed; unhold ends that.
func (f *fakeEvents) hold(release <-chan struct{}) <-chan string {
	held := make(chan string, 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held, f.release = held, release
	return held
}

func (f *fakeEvents) unhold() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held, f.release = nil, nil
}

// The link drops while whatsmeow sends a delivery receipt: the receipt's
// write and the socket's close run at once. Unpatched, whatsmeow's
// FrameSocket read its connection field in SendFrame while Close (run by the
// read pump when the other side hung up) cleared it, a data race that -race
// reports (whatsmeow issue 1085; third_party/PATCH.md). Patched, the receipt
// fails with the socket's error or goes out before the close, and the
// message is acked on this connection or redelivered and acked on the next.
// The drop and the release of the receipt meet in every order: drop first,
// release first, and both at once.
func TestLinkDroppedMidReceipt(t *testing.T) {
	sim, r, alice := linked(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	phone := sim.Phone(account)
	orders := []func(release chan struct{}){
		func(release chan struct{}) { phone.DropConnections(); close(release) },
		func(release chan struct{}) { close(release); phone.DropConnections() },
		func(release chan struct{}) { go phone.DropConnections(); close(release) },
	}
	for round := range 2 * len(orders) {
		release := make(chan struct{})
		held := r.events.hold(release)
		id, err := alice.SendText(ctx, phone.JID(), "mid-receipt")
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-held: // the handler runs; the receipt follows when it returns
		case <-ctx.Done():
			t.Fatalf("round %d: the message never reached the handler", round)
		}
		r.events.unhold() // a redelivery is stored at once
		orders[round%len(orders)](release)
		waitState(t, r.Session, "reconnected", func(s bridge.SessionStatus) bool { return s.Connected() })
		if _, err := alice.WaitTick(ctx, id, ""); err != nil {
			t.Fatalf("round %d: the message was never acked: %v", round, err)
		}
	}
}
