package sendqueue

import (
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

func TestPlan(t *testing.T) {
	now := time.UnixMilli(1_763_719_200_000)
	schedule := []time.Duration{5 * time.Second, 15 * time.Second, time.Minute}
	due := func(d time.Duration) sql.NullInt64 { return sql.NullInt64{Int64: now.Add(d).UnixMilli(), Valid: true} }
	failure := errors.New("upload failed")
	cases := []struct {
		name     string
		attempts int
		err      error
		schedule []time.Duration
		status   bridge.Status
		next     sql.NullInt64
		lastErr  string
	}{
		{"sent at once", 1, nil, schedule, bridge.StatusSent, sql.NullInt64{}, ""},
		{"sent on the last retry", 4, nil, schedule, bridge.StatusSent, sql.NullInt64{}, ""},
		{"first failure waits the first delay", 1, failure, schedule, bridge.StatusQueued, due(5 * time.Second), "upload failed"},
		{"second failure waits the second delay", 2, failure, schedule, bridge.StatusQueued, due(15 * time.Second), "upload failed"},
		{"third failure waits the last delay", 3, failure, schedule, bridge.StatusQueued, due(time.Minute), "upload failed"},
		{"failure of the last retry is final", 4, failure, schedule, bridge.StatusFailed, sql.NullInt64{}, "upload failed"},
		{"no session is retried like any failure", 1, bridge.ErrNotLinked, schedule, bridge.StatusQueued, due(5 * time.Second), bridge.ErrNotLinked.Error()},
		{"no schedule: one attempt only", 1, failure, nil, bridge.StatusFailed, sql.NullInt64{}, "upload failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, next, lastErr := plan(c.attempts, c.err, c.schedule, now)
			if status != c.status || next != c.next || lastErr != c.lastErr {
				t.Errorf("plan(%d, %v) = %s, %v, %q; want %s, %v, %q", c.attempts, c.err, status, next, lastErr, c.status, c.next, c.lastErr)
			}
		})
	}
}

// A receipt only moves a message forward, and never fails it.
func TestReceiptMoves(t *testing.T) {
	cases := []struct {
		from, to bridge.Status
		want     bool
	}{
		{bridge.StatusQueued, bridge.StatusSent, true},
		{bridge.StatusQueued, bridge.StatusDelivered, true},
		{bridge.StatusQueued, bridge.StatusRead, true},
		{bridge.StatusSent, bridge.StatusDelivered, true},
		{bridge.StatusDelivered, bridge.StatusRead, true},
		{bridge.StatusRead, bridge.StatusDelivered, false}, // a late Delivered after Read
		{bridge.StatusDelivered, bridge.StatusDelivered, false},
		{bridge.StatusSent, bridge.StatusQueued, false},
		{bridge.StatusFailed, bridge.StatusDelivered, false},
		{bridge.StatusQueued, bridge.StatusFailed, false}, // only the queue fails a message, never a receipt
		{bridge.StatusSent, bridge.Status("Played"), false},
	}
	for _, c := range cases {
		if got := receiptMoves(c.from, c.to); got != c.want {
			t.Errorf("receiptMoves(%s, %s) = %v", c.from, c.to, got)
		}
	}
}

// Filter.Status comes from bridge.ParseStatus: the API's spelling, in any
// case, so that ?status=queued finds what a client kept from an old answer.
func TestParseStatus(t *testing.T) {
	for s, want := range map[string]bridge.Status{"Queued": bridge.StatusQueued, "Sent": bridge.StatusSent,
		"Delivered": bridge.StatusDelivered, "Read": bridge.StatusRead, "Failed": bridge.StatusFailed,
		"queued": bridge.StatusQueued, "READ": bridge.StatusRead, "failed": bridge.StatusFailed} {
		if st, ok := bridge.ParseStatus(s); !ok || st != want {
			t.Errorf("ParseStatus(%q) = %q, %v", s, st, ok)
		}
	}
	for _, s := range []string{"", "Sending", "queued ", "Queuedd"} {
		if _, ok := bridge.ParseStatus(s); ok {
			t.Errorf("ParseStatus(%q) accepted", s)
		}
	}
}
