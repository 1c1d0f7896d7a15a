package whatsapp

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/contract"
)

// WhatsApp refuses (463) a first message to someone who gave the account no
// trusted-contact token. The bridge reports it as the reach-out restriction
// (paced by its back-off, not retried at once); once the contact has
// written, whatsmeow holds the contact's token and attaches it, and the
// same send goes through.
func TestTrustedContactTokenOpensTheChat(t *testing.T) {
	sim := wasim.Start(t)
	sim.RequireTrustedContactTokens(true)
	r := start(t, sim, newBridgeFiles(t), func(o *Options) { o.RestrictionBackoff = 10 * time.Millisecond })
	linkByQR(t, sim, r)
	alice := sim.Contact("4915100000002", "Alice")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hello := func() error {
		return r.Send(ctx, bridge.Outgoing{ID: r.NewMessageID(), Recipient: bridge.PhoneRecipient(alice.Number()),
			Type: bridge.TypeText, Text: "hello"})
	}

	var restricted *bridge.RestrictedError
	if err := hello(); !errors.As(err, &restricted) || restricted.Code != bridge.RestrictionReachout || !restricted.Until.After(time.Now().Add(-time.Second)) {
		t.Fatalf("first message to a stranger: %v, want the reach-out restriction", err)
	}
	if s := r.Status(); s.Reason != contract.ReasonRestricted || s.RestrictedUntil.IsZero() {
		t.Errorf("status after a 463: %+v", s)
	}

	id, err := alice.SendText(ctx, sim.Phone(account).JID(), "hi, I wrote first")
	if err != nil {
		t.Fatal(err)
	}
	waitIncoming(t, r, id)
	waitState(t, r.Session, "the restriction's end", isState(contract.StateConnected, contract.ReasonNone))
	if err := hello(); err != nil {
		t.Fatalf("message to a contact who wrote first: %v", err)
	}
	if got, err := alice.Next(ctx); err != nil || got.Text() != "hello" {
		t.Fatalf("alice read %+v (%v)", got, err)
	}
}
