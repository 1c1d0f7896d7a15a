package whatsapp

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/contract"
)

// WhatsApp's restriction of sending is kept in bridge.db: after a restart
// the session still says restricted until the same time, so the queue holds
// instead of spending a refused send to learn it again.
func TestRestrictionSurvivesRestart(t *testing.T) {
	sim := wasim.Start(t)
	f := newBridgeFiles(t)
	r := start(t, sim, f)
	linkByQR(t, sim, r)
	contact := sim.Contact("4915100000077", "Gail")
	sim.Phone(account).RateOverLimit(1)
	err := r.Send(context.Background(), bridge.Outgoing{ID: r.NewMessageID(), Recipient: bridge.PhoneRecipient(contact.JID().User),
		Type: bridge.TypeText, Text: "refused"})
	until, restricted := bridge.RestrictedUntil(err)
	if !restricted || !until.After(time.Now()) {
		t.Fatalf("send during rate-overlimit: %v", err)
	}
	r.stop()

	r2 := start(t, sim, f)
	if got := r2.RestrictedUntil(); !got.Equal(until.Truncate(time.Millisecond)) {
		t.Fatalf("after the restart restricted until %v, want %v", got, until)
	}
	s := waitState(t, r2.Session, "reconnected, restricted", isState(contract.StateConnected, contract.ReasonRestricted))
	if !s.RestrictedUntil.Equal(until.Truncate(time.Millisecond)) {
		t.Errorf("status %+v", s)
	}
}
