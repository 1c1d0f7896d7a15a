package webhook

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

func TestPruneDeletesOldDeliveredOnly(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	o := openOutbox(t, "http://127.0.0.1:1/hook", func(opts *Options) { opts.Now = func() time.Time { return now } })
	o.enqueue(t, SessionStatus(bridge.SessionStatus{State: "a"}, now), SessionStatus(bridge.SessionStatus{State: "b"}, now),
		SessionStatus(bridge.SessionStatus{State: "c"}, now))
	old, recent := now.Add(-8*24*time.Hour).UnixMilli(), now.Add(-time.Hour).UnixMilli()
	for id, delivered := range map[int]int64{1: old, 2: recent} {
		if _, err := o.opts.DB.Exec(`UPDATE webhook_outbox SET status = 'delivered', delivered_at = ? WHERE id = ?`, delivered, id); err != nil {
			t.Fatal(err)
		}
	}
	n, err := o.prune(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("pruned %d, %v; want 1", n, err)
	}
	var left int
	if err := o.opts.DB.QueryRow(`SELECT count(*) FROM webhook_outbox`).Scan(&left); err != nil || left != 2 {
		t.Errorf("%d rows left, %v; want the recent delivered and the pending one", left, err)
	}
}

// The delivered rows and the event log keep what their settings say
// (DELIVERED_RETENTION, EVENT_LOG_RETENTION), swept every tenth of the
// shorter one: with both at 2 s, rows older than that go within seconds,
// not after the 7 days and the 24 hours they were kept whatever the
// settings.
func TestRetentionsOfDeliveredRowsAndTheEventLog(t *testing.T) {
	r := newReceiver(t, false)
	o := openOutbox(t, r.srv.URL, func(opts *Options) { opts.KeepDelivered, opts.KeepEvents = 2*time.Second, 2*time.Second })
	o.run(t)
	for i := range 3 {
		if err := o.EnqueueNow(context.Background(), SessionStatus(bridge.SessionStatus{State: "connected"}, time.Unix(int64(i), 0))); err != nil {
			t.Fatal(err)
		}
	}
	r.waitCount(t, 3, 10*time.Second)
	long := time.Now().Add(-time.Minute).UnixMilli()
	testutil.Poll(t, 10*time.Second, func() (int, bool) {
		// Age whatever is there (a delivery commits after the receiver
		// answered), then see what the sweeps left.
		_, _ = o.opts.DB.Exec(`UPDATE webhook_outbox SET delivered_at = ? WHERE status = 'delivered'`, long)
		_, _ = o.opts.DB.Exec(`UPDATE event_log SET created_at = ?`, long)
		var left int
		_ = o.opts.DB.QueryRow(`SELECT (SELECT count(*) FROM webhook_outbox) + (SELECT count(*) FROM event_log)`).Scan(&left)
		return left, left == 0
	}, "delivered rows and logged events past their retention swept")
}
