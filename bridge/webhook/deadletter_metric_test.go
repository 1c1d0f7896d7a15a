package webhook

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// countingObserver counts what the outbox reports to metrics.
type countingObserver struct{ delivered, failed, dead atomic.Int64 }

func (c *countingObserver) WebhookDelivery(_ string, ok bool) {
	if ok {
		c.delivered.Add(1)
	} else {
		c.failed.Add(1)
	}
}

func (c *countingObserver) WebhookDeadLetter(string) { c.dead.Add(1) }

// An event whose retry window ends is reported once as a dead letter, the
// figure behind the chart's dead-letter alert.
func TestDeadLetterIsObserved(t *testing.T) {
	r := newReceiver(t, false)
	r.answer.Store(http.StatusBadGateway)
	obs := &countingObserver{}
	o := startOutbox(t, r.srv.URL, func(opts *Options) {
		opts.MaxAge = 300 * time.Millisecond
		opts.Observer = obs
	})
	o.enqueue(t, SessionStatus(bridge.SessionStatus{State: contract.StateConnected}, time.Now()))
	testutil.Eventually(t, 10*time.Second, func() bool { return obs.dead.Load() == 1 }, "no dead letter observed")
	if obs.failed.Load() < 1 || obs.delivered.Load() != 0 {
		t.Errorf("deliveries: %d failed, %d delivered", obs.failed.Load(), obs.delivered.Load())
	}
	// A dead letter is not posted again: once a later event is delivered,
	// the dispatcher has scanned past it, and the receiver (answering 200
	// now) would have counted it delivered too.
	r.answer.Store(http.StatusOK)
	o.enqueue(t, SessionStatus(bridge.SessionStatus{State: contract.StateConnecting}, time.Now()))
	testutil.Eventually(t, 10*time.Second, func() bool { return obs.delivered.Load() == 1 }, "the later event was not delivered")
	o.waitDrained(t, 5*time.Second)
	if n, d := obs.dead.Load(), obs.delivered.Load(); n != 1 || d != 1 {
		t.Errorf("%d dead letters observed and %d deliveries, want 1 and 1", n, d)
	}
}
