package webhook

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// The dashboard's read of calls and blocks: only the types asked for,
// newest first, at most limit, whatever the subscriptions (none here).
func TestRecentEventsByType(t *testing.T) {
	o := openOutbox(t, "", nil)
	alice := bridge.PhoneRecipient("4915100000002")
	at := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	o.enqueue(t,
		CallEvent(bridge.Call{ID: "C1", From: alice, At: at}),
		ContactIdentity(bridge.ContactIdentity{Phone: alice, LID: bridge.Recipient{Kind: bridge.RecipientLID, ID: "7"}, At: at}),
		CallEvent(bridge.Call{ID: "C1", From: alice, At: at, Ended: bridge.CallMissed}),
		ContactBlocked(bridge.BlockChange{Contact: alice, ContactPhone: alice, Blocked: true, By: bridge.BlockedByAPI, At: at}),
	)
	got, err := o.RecentEvents(t.Context(), []string{TypeCallOffer, TypeCallEnded, TypeContactBlocked}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Type != TypeContactBlocked || got[1].Type != TypeCallEnded {
		t.Fatalf("got %+v, want the block then the call's end", got)
	}
	var block map[string]any
	if err := json.Unmarshal(got[0].Payload, &block); err != nil || block["blocked"] != true || block["by"] != "api" {
		t.Errorf("block payload %s %v", got[0].Payload, err)
	}
	if none, err := o.RecentEvents(t.Context(), nil, 10); err != nil || len(none) != 0 {
		t.Errorf("no types: %v %v", none, err)
	}
}
