package sendqueue

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// numbers are n phone recipients from the given first number on.
func numbers(first, n int) []bridge.Recipient {
	out := make([]bridge.Recipient, n)
	for i := range out {
		out[i] = bridge.PhoneRecipient(fmt.Sprintf("49151%08d", first+i))
	}
	return out
}

func statusTo(recipients []bridge.Recipient) Request {
	return Request{Recipient: bridge.StatusBroadcast, Items: []Item{{Type: bridge.TypeText, Text: "Open on Sunday",
		Status: &bridge.StatusPost{Recipients: recipients}}}}
}

// A status's recipients are checked like a message's number: those not on
// WhatsApp leave the audience, and a status with nobody left fails.
func TestStatusAudienceIsChecked(t *testing.T) {
	f := newFixture(t, time.Hour)
	checker := &fakeChecker{onWhatsApp: map[string]bool{}}
	f.open(func(_ *MessageLogOptions, o *Options) { o.Checker = checker })
	audience := numbers(1, 3)
	checker.onWhatsApp[audience[0].ID], checker.onWhatsApp[audience[2].ID] = true, true

	if m := f.submit(statusTo(audience)).Messages[0]; m.Status != bridge.StatusSent {
		t.Fatalf("status: %+v", m)
	}
	calls := f.sender.calls()
	if got := calls[len(calls)-1].out.Status.Recipients; !reflect.DeepEqual(got, []bridge.Recipient{audience[0], audience[2]}) {
		t.Errorf("sent to %v, want the two on WhatsApp", got)
	}
	if checker.asked != 3 {
		t.Errorf("%d recipients checked, want 3", checker.asked)
	}
	if m := f.submit(statusTo(audience[1:2])).Messages[0]; m.Status != bridge.StatusFailed || m.FailReason() != bridge.FailNotOnWhatsApp {
		t.Errorf("a status to nobody on WhatsApp: %+v", m)
	}
}

// STATUS_AUDIENCE_RATE: a status whose recipients exceed what is left of the
// budget waits, Queued, without spending an attempt or a retry; a check
// refused by CHECK_RATE defers it the same way.
func TestStatusAudienceIsPaced(t *testing.T) {
	f := newFixture(t, time.Hour)
	checker := &fakeChecker{onWhatsApp: map[string]bool{}}
	for _, r := range numbers(1, 400) {
		checker.onWhatsApp[r.ID] = true
	}
	f.open(func(_ *MessageLogOptions, o *Options) {
		o.Checker, o.StatusAudience = checker, bridge.SendRate{N: 300, Per: time.Hour}
	})
	for i, n := range []int{200, 100} {
		if m := f.submit(statusTo(numbers(1, n))).Messages[0]; m.Status != bridge.StatusSent {
			t.Fatalf("status %d to %d within the budget: %+v", i, n, m)
		}
	}
	sends := len(f.sender.calls())
	m := f.submit(statusTo(numbers(1, 10))).Messages[0]
	if m.Status != bridge.StatusQueued || m.Attempts != 0 || m.RetryCount != 0 {
		t.Fatalf("a status beyond the budget: %+v, want Queued with no attempt", m)
	}
	if n := len(f.sender.calls()); n != sends {
		t.Errorf("%d sends beyond the budget", n-sends)
	}
	due := f.count(`SELECT COUNT(*) FROM messages WHERE id = ? AND next_attempt_at > ?`, m.ID, time.Now().Add(time.Minute).UnixMilli())
	if due != 1 {
		t.Errorf("the deferred status is not due in about 10 recipients' time (12 s each)")
	}

	checker.err = bridge.RetryAfter(30 * time.Second)
	f.open(func(_ *MessageLogOptions, o *Options) { o.StatusAudience = bridge.SendRate{} })
	if m := f.submit(statusTo(numbers(1000, 1))).Messages[0]; m.Status != bridge.StatusQueued || m.Attempts != 0 {
		t.Errorf("a status whose check waits for CHECK_RATE: %+v", m)
	}
}
