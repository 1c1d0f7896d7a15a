package whatsapp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// linked is a bridge linked to the simulator's account, with a contact
// that writes to it.
func linked(t testing.TB) (*wasim.Simulator, *running, *wasim.User) {
	t.Helper()
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	linkByQR(t, sim, r)
	return sim, r, sim.Contact("4915100000002", "Alice")
}

// received returns the messages the fake port stored, by WhatsApp id.
func (f *fakeEvents) received() map[string][]bridge.Incoming {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]bridge.Incoming{}
	for _, in := range f.incoming {
		out[in.WhatsAppID] = append(out[in.WhatsAppID], in)
	}
	return out
}

func (f *fakeEvents) triesOf(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tries[id]
}

func (f *fakeEvents) failIncoming(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.incomingErr = err
}

// A message whose storing failed is not acked: WhatsApp delivers it again
// on the next connection, it decrypts again (the decrypted-event buffer),
// and it is stored exactly once.
func TestIncomingStoreFailureIsRedeliveredOnce(t *testing.T) {
	sim, r, alice := linked(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	to := sim.Phone(account).JID()

	r.events.failIncoming(errors.New("disk full"))
	id, err := alice.SendText(ctx, to, "kept")
	if err != nil {
		t.Fatal(err)
	}
	// The handler ran and refused: no ack (no delivery tick) comes back.
	waitFor(t, "the refused store", func() bool { return r.events.triesOf(id) > 0 })
	time.Sleep(300 * time.Millisecond)
	if ticks := alice.Ticks(); len(ticks) != 0 {
		t.Fatalf("a message that was not stored was acked: %+v", ticks)
	}
	r.events.failIncoming(nil)
	next, err := alice.SendText(ctx, to, "after")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the next message", func() bool { return len(r.events.received()[next]) == 1 })
	if got := r.events.received()[id]; len(got) != 0 {
		t.Fatalf("the refused message arrived on the same connection: %+v", got)
	}

	sim.Phone(account).DropConnections()
	waitFor(t, "the redelivery", func() bool { return len(r.events.received()[id]) == 1 })
	if _, err := alice.WaitTick(ctx, id, ""); err != nil {
		t.Fatalf("the redelivered message was not acked: %v", err)
	}
	sim.Phone(account).DropConnections() // and once more: nothing is delivered twice
	waitState(t, r.Session, "reconnected", func(s bridge.SessionStatus) bool { return s.Connected() })
	time.Sleep(500 * time.Millisecond)
	got := r.events.received()
	if len(got[id]) != 1 || got[id][0].Text != "kept" || len(got[next]) != 1 {
		t.Fatalf("stored: %+v", got)
	}
}
