package inbox

import (
	"context"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// A reply to a received message quotes its sender and text; a reaction to
// it, or a message of another chat, is not a quote.
func TestQuotedFindsReceivedMessages(t *testing.T) {
	f := newFixture(t, "")
	f.store(t, text("W1", "where is my order?"))
	f.store(t, bridge.Incoming{WhatsAppID: "W2", From: ana, Chat: ana, Type: "reaction", TargetID: "W1", Emoji: "👍",
		Timestamp: start})
	ctx := context.Background()

	q, ok, err := f.Quoted(ctx, ana, "W1")
	if err != nil || !ok || q.Sender != ana || q.Text != "where is my order?" {
		t.Errorf("W1: %+v %v %v", q, ok, err)
	}
	other := bridge.PhoneRecipient("4915199999999")
	for _, c := range []struct {
		chat bridge.Recipient
		id   string
	}{{ana, "W2"}, {other, "W1"}, {ana, "W9"}} {
		if q, ok, err := f.Quoted(ctx, c.chat, c.id); err != nil || ok {
			t.Errorf("%s in %s: %+v %v %v", c.id, c.chat, q, ok, err)
		}
	}
}
