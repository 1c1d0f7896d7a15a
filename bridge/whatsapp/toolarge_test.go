package whatsapp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// A text whose ciphertext is over MaxIncomingCiphertext is recorded, not
// decrypted: the store gets it with no text and its size as the cut of
// field message; it is acked once stored (the sender sees it delivered)
// and so not delivered again after a reconnect; the contact's next message
// decrypts as usual.
func TestTooLargeMessageIsRecordedAndAcked(t *testing.T) {
	sim, r, alice := linked(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	to := sim.Phone(account).JID()
	const size = MaxIncomingCiphertext + 1<<20
	id, err := alice.SendText(ctx, to, strings.Repeat("x", size))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the too-large message", func() bool { return len(r.events.received()[id]) == 1 })
	got := r.events.received()[id][0]
	if got.Text != "" || got.Type != "text" || len(got.Truncated) != 1 || got.Truncated[0].Field != TooLargeField ||
		got.Truncated[0].Size < size || got.From == (bridge.Recipient{}) {
		t.Fatalf("recorded as %+v", got)
	}
	if _, err := alice.WaitTick(ctx, id, ""); err != nil {
		t.Fatalf("the recorded message was not acked: %v", err)
	}
	next, err := alice.SendText(ctx, to, "small")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the next message", func() bool { return len(r.events.received()[next]) == 1 })
	if in := r.events.received()[next][0]; in.Text != "small" || in.Truncated != nil {
		t.Fatalf("the next message: %+v", in)
	}
	sim.Phone(account).DropConnections()
	after, err := alice.SendText(ctx, to, "after the reconnect")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a message after the reconnect", func() bool { return len(r.events.received()[after]) == 1 })
	if n := len(r.events.received()[id]); n != 1 {
		t.Errorf("the too-large message was recorded %d times", n)
	}
}
