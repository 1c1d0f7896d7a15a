package process

import (
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// REJECT_CALLS=unknown: a stranger's call is rejected at once (the caller's
// phone hears the reject), reported as call.offer and call.ended with the
// reason, and answered with REJECT_CALLS_REPLY through the send queue.
func TestCallFromAStrangerIsRejectedAndAnswered(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	const reply = "We can't take calls here; please write."
	linkedBridge(t, sim, t.TempDir(), append(hooks.env(), "REJECT_CALLS=unknown", "REJECT_CALLS_REPLY="+reply)...)
	caller := sim.Contact(alice, "Alice")
	id := caller.Call(sim.Phone(testAccount), true)

	offer := hooks.wait("call.offer", func(e hookEvent) bool { return e.str("event") == "call.offer" && e.str("call_id") == id })
	if offer.str("rejected") != "unknown" || offer.str("from") != alice || offer.str("from_lid") != caller.LID().String() {
		t.Errorf("call.offer %v", offer)
	}
	ended := hooks.wait("call.ended", func(e hookEvent) bool { return e.str("event") == "call.ended" && e.str("call_id") == id })
	if ended.str("reason") != "rejected" {
		t.Errorf("call.ended %v", ended)
	}
	if got := receivedTimes(t, caller, 1, 30*time.Second); len(got) != 1 || caller.Received()[0].Text() != reply {
		t.Errorf("the caller read %+v", caller.Received())
	}
	if ends := caller.Ended(); len(ends) != 1 || ends[0].CallID != id || ends[0].Reason != "rejected" {
		t.Errorf("the caller's phone saw %+v", ends)
	}
}
