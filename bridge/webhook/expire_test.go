package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// When a chat's head becomes a dead letter, the events queued behind it
// whose window has passed too go with it, in the same transaction: a hung
// receiver's backlog of 1,000 expired events took one 10 s timeout each
// (about 2,500 s) to become dead letters.
func TestExpiredBacklogGoesWithItsHead(t *testing.T) {
	release := make(chan struct{})
	var hits atomic.Int64
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) == 1 {
			<-release
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) })
	// Every event's window ends at once: the backlog's passes while it
	// waits behind the hung head.
	o := openOutbox(t, hung.URL, func(opts *Options) { opts.MaxAge = time.Millisecond })
	o.run(t)
	const backlog = 20
	for i := range backlog {
		if err := o.EnqueueNow(context.Background(), SessionStatus(bridge.SessionStatus{State: "connected"}, time.Unix(int64(i), 0))); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Poll(t, 10*time.Second, func() (int64, bool) { return hits.Load(), hits.Load() == 1 }, "the head's attempt, hung")
	release <- struct{}{}
	testutil.Poll(t, 10*time.Second, func() (int, bool) {
		var dead int
		_ = o.opts.DB.QueryRow(`SELECT count(*) FROM webhook_outbox WHERE status = 'dead'`).Scan(&dead)
		return dead, dead == backlog
	}, "the whole expired backlog dead")
	if n := hits.Load(); n != 1 {
		t.Errorf("the receiver was tried %d times; the expired backlog behind the head needs no attempt", n)
	}
}
