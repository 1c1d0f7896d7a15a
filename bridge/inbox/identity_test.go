package inbox

import (
	"context"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// identityEvents counts the contact.identity events in the outbox.
func (f *fixture) identityEvents(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.db.QueryRow(`SELECT COUNT(*) FROM webhook_outbox WHERE event = ?`, webhook.TypeContactIdentity).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A pair of number and LID is announced once, and only when the history
// named the contact by one side alone before; a contact named by both from
// its first message is not announced.
func TestIdentityJoinsWhatTheHistoryKnewApart(t *testing.T) {
	f := newFixture(t, "http://127.0.0.1:9/hook")
	hidden := text("3A01", "who am I")
	hidden.From, hidden.FromPhone, hidden.FromLID, hidden.Chat = lid, bridge.Recipient{}, lid, lid
	shown := text("3A02", "it's me")
	shown.FromLID = lid
	again := shown
	again.WhatsAppID = "3A03"
	for _, in := range []bridge.Incoming{hidden, shown, again} {
		f.store(t, in)
	}
	if n := f.identityEvents(t); n != 1 {
		t.Fatalf("%d contact.identity events, want 1", n)
	}

	bob := bridge.PhoneRecipient("4915100000003")
	newcomer := text("3A04", "hello")
	newcomer.From, newcomer.FromPhone, newcomer.Chat = bob, bob, bob
	newcomer.FromLID = bridge.Recipient{Kind: bridge.RecipientLID, ID: "11223344"}
	f.store(t, newcomer)
	if n := f.identityEvents(t); n != 1 {
		t.Errorf("a contact named by both from its first message was announced: %d events", n)
	}
}

// The identity book brings a contact to the side it was known by first:
// the LID of one that first hid its number, the number of one that came
// with both; a book loaded from the database after a restart agrees.
func TestIdentityBookKeepsTheSideKnownFirst(t *testing.T) {
	f := newFixture(t, "http://127.0.0.1:9/hook")
	hidden := text("3B01", "who am I")
	hidden.From, hidden.FromPhone, hidden.FromLID, hidden.Chat = lid, bridge.Recipient{}, lid, lid
	shown := text("3B02", "it's me")
	shown.FromLID = lid
	bob := bridge.PhoneRecipient("4915100000003")
	bobLID := bridge.Recipient{Kind: bridge.RecipientLID, ID: "11223344"}
	newcomer := text("3B03", "hello")
	newcomer.From, newcomer.FromPhone, newcomer.FromLID, newcomer.Chat = bob, bob, bobLID, bob
	for _, in := range []bridge.Incoming{hidden, shown, newcomer} {
		f.store(t, in)
	}
	reloaded := NewIdentityBook()
	if err := reloaded.Load(context.Background(), f.db); err != nil {
		t.Fatal(err)
	}
	stranger := bridge.PhoneRecipient("4915100000009")
	for name, book := range map[string]*IdentityBook{"kept": f.opts.Identities, "reloaded": reloaded} {
		for _, c := range []struct{ of, want bridge.Recipient }{
			{shown.FromPhone, lid}, {lid, lid}, {bob, bob}, {bobLID, bob}, {stranger, stranger},
		} {
			if got := book.Canonical(c.of); got != c.want {
				t.Errorf("%s book: %v is known as %v, want %v", name, c.of, got, c.want)
			}
		}
	}
}
