package whatsapp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
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
	expectBoundedFailure(t, r, func() error { return r.Send(context.Background(), out()) })
	sim.Phone(account).ResumeAnswering()
}

// The send queue's attempt checks a number not cached yet before it sends:
// a check on a link that just went silent is bounded like the send, by the
// heartbeat, whether it asks WhatsApp at once or waits for the budget's
// next token (CHECK_RATE) first.
func TestNumberCheckNeverWaitsOnADeadLink(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	for name, rate := range map[string]bridge.SendRate{"asks at once": unpacedChecks, "waits for a token": {N: 1, Per: time.Minute}} {
		t.Run(name, func(t *testing.T) {
			sim := wasim.Start(t)
			r := start(t, sim, newBridgeFiles(t))
			linkByQR(t, sim, r)
			batcher := sqlite.NewBatcher(r.db)
			t.Cleanup(batcher.Close)
			checks := NewContactBook(r.Session, r.db, batcher, rate, 1).QueueChecks()
			attempt := func(number string) error {
				if _, err := checks.Contact(context.Background(), number); err != nil {
					return err
				}
				return r.Send(context.Background(), bridge.Outgoing{ID: r.NewMessageID(),
					Recipient: bridge.PhoneRecipient(number), Type: bridge.TypeText, Text: "hi"})
			}
			if err := attempt(sim.Contact("4915100000002", "Alice").JID().User); err != nil {
				t.Fatalf("check and send on a live link: %v", err)
			}
			sim.Phone(account).StopAnswering()
			bob := sim.Contact("4915100000003", "Bob")
			expectBoundedFailure(t, r, func() error { return attempt(bob.JID().User) })
			sim.Phone(account).ResumeAnswering()
		})
	}
}

// expectBoundedFailure runs attempt on a link that has just gone silent and
// expects it to fail, as not_linked or a timeout, within 3 heartbeat
// intervals.
func expectBoundedFailure(t *testing.T, r *running, attempt func() error) {
	t.Helper()
	if !r.Ready() {
		t.Fatal("the link went down before the attempt began; the test needs it up")
	}
	done := make(chan error, 1)
	began := time.Now()
	go func() { done <- attempt() }()
	select {
	case err := <-done:
		took := time.Since(began)
		t.Logf("attempt on a silent link returned after %v: %v", took, err)
		if err == nil {
			t.Fatal("an attempt on a silent link succeeded")
		}
		if !errors.Is(err, bridge.ErrNotLinked) && bridge.ErrorOf(err).Kind != bridge.KindTimeout {
			t.Errorf("error %v is neither not_linked nor a timeout", err)
		}
		if took >= 3*testHeartbeat {
			t.Errorf("the attempt took %v, 3 heartbeat intervals or more", took)
		}
	case <-time.After(10 * testHeartbeat):
		t.Fatalf("the attempt still waits after %v", 10*testHeartbeat)
	}
}
