package whatsapp

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// callLog is the CallEvents port, recording what it heard.
type callLog struct {
	mu             sync.Mutex
	offered, ended []bridge.Call
}

func (l *callLog) CallOffered(_ context.Context, c bridge.Call) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.offered = append(l.offered, c)
	return nil
}

func (l *callLog) CallEnded(_ context.Context, c bridge.Call) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = append(l.ended, c)
	return nil
}

func (l *callLog) endOf(id string) (bridge.Call, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.IndexFunc(l.ended, func(c bridge.Call) bool { return c.ID == id })
	if i < 0 {
		return bridge.Call{}, false
	}
	return l.ended[i], true
}

func (l *callLog) offerOf(id string) (bridge.Call, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.IndexFunc(l.offered, func(c bridge.Call) bool { return c.ID == id })
	if i < 0 {
		return bridge.Call{}, false
	}
	return l.offered[i], true
}

// startWithCalls links a bridge that reports calls and rejects them as
// mode says.
func startWithCalls(t *testing.T, mode bridge.RejectCalls) (*wasim.Simulator, *callLog, *wasim.User) {
	t.Helper()
	sim := wasim.Start(t)
	calls := &callLog{}
	r := start(t, sim, newBridgeFiles(t), func(o *Options) { o.Calls, o.RejectCalls = calls, mode })
	linkByQR(t, sim, r)
	return sim, calls, sim.Contact("4915100000002", "Alice")
}

// A call rings (call.offer, naming the caller by number and LID), and
// ends as missed when the caller hangs up, or as accepted elsewhere when
// the account's phone answered it.
func TestCallsAreReported(t *testing.T) {
	sim, calls, alice := startWithCalls(t, bridge.RejectCallsOff)
	account := sim.Phone(account)

	missed := alice.Call(account, true)
	waitFor(t, "the offer", func() bool { _, ok := calls.offerOf(missed); return ok })
	offer, _ := calls.offerOf(missed)
	if offer.From != bridge.PhoneRecipient(alice.Number()) || offer.FromLID.ID != alice.LID().User || !offer.Video || offer.Rejected != "" {
		t.Errorf("offer %+v", offer)
	}
	alice.HangUp(account, missed)
	waitFor(t, "the missed call", func() bool { _, ok := calls.endOf(missed); return ok })
	if c, _ := calls.endOf(missed); c.Ended != bridge.CallMissed {
		t.Errorf("ended %+v, want missed", c)
	}

	answered := alice.Call(account, false)
	waitFor(t, "the second offer", func() bool { _, ok := calls.offerOf(answered); return ok })
	account.AnswerOnPhone(alice, answered)
	alice.HangUp(account, answered)
	waitFor(t, "the answered call's end", func() bool { _, ok := calls.endOf(answered); return ok })
	if c, _ := calls.endOf(answered); c.Ended != bridge.CallAcceptedElsewhere || c.Video {
		t.Errorf("ended %+v, want accepted_elsewhere", c)
	}
	if got := alice.Ended(); len(got) != 0 {
		t.Errorf("the bridge rejected calls with REJECT_CALLS=off: %+v", got)
	}
}

// REJECT_CALLS rejects every call, or those of callers who are not
// contacts: the caller's phone hears the reject, and the events say why.
func TestCallsAreRejected(t *testing.T) {
	for _, mode := range []bridge.RejectCalls{bridge.RejectCallsAll, bridge.RejectCallsUnknown} {
		t.Run(string(mode), func(t *testing.T) {
			sim, calls, alice := startWithCalls(t, mode)
			id := alice.Call(sim.Phone(account), false)
			waitFor(t, "the rejected call's end", func() bool { _, ok := calls.endOf(id); return ok })
			offer, _ := calls.offerOf(id)
			end, _ := calls.endOf(id)
			if offer.Rejected != mode || end.Ended != bridge.CallRejected || end.Rejected != mode {
				t.Errorf("offer %+v, end %+v", offer, end)
			}
			waitFor(t, "the caller's phone to hear the reject", func() bool { return len(alice.Ended()) == 1 })
			if got := alice.Ended()[0]; got.CallID != id || got.Reason != "rejected" {
				t.Errorf("the caller saw %+v", got)
			}
		})
	}
}
