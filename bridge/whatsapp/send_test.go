package whatsapp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// A send on a link that went silent returns within a few heartbeat
// intervals, as an error the queue retries, instead of waiting for
// whatsmeow's 75 s response timeout.
func TestSendNeverWaitsOnADeadLink(t *testing.T) {
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	linkByQR(t, sim, r)
	alice := sim.Contact("4915100000002", "Alice")
	out := func() bridge.Outgoing {
		return bridge.Outgoing{ID: r.NewMessageID(), Recipient: bridge.PhoneRecipient(alice.JID().User), Type: bridge.TypeText, Text: "hi"}
	}
	if err := r.Send(context.Background(), out()); err != nil {
		t.Fatalf("send on a live link: %v", err)
	}

	sim.Phone(account).StopAnswering()
	if !r.Ready() {
		t.Fatal("the link went down before the send began; the test needs it up")
	}
	sent := make(chan error, 1)
	began := time.Now()
	go func() { sent <- r.Send(context.Background(), out()) }()
	select {
	case err := <-sent:
		took := time.Since(began)
		t.Logf("send on a silent link returned after %v: %v", took, err)
		if err == nil {
			t.Fatal("a send on a silent link succeeded")
		}
		if !errors.Is(err, bridge.ErrNotLinked) && bridge.ErrorOf(err).Kind != bridge.KindTimeout {
			t.Errorf("error %v is neither not_linked nor a timeout", err)
		}
		if took >= 3*testHeartbeat {
			t.Errorf("the send took %v, 3 heartbeat intervals or more", took)
		}
	case <-time.After(10 * testHeartbeat):
		t.Fatalf("the send still waits after %v", 10*testHeartbeat)
	}
	sim.Phone(account).ResumeAnswering()
}
