package webhook

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
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
