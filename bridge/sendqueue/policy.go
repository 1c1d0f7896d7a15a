package sendqueue

import (
	"database/sql"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/durable"
)

// plan is the retry policy: the state of a message after its attempt
// number attempts (1 = the immediate one) ended with sendErr (nil: sent).
// The next attempt, if any, is due after the schedule's delay for it.
// Every failure is retried alike, bridge.ErrNotLinked included: a short
// outage or a pairing in progress loses nothing.
func plan(attempts int, sendErr error, schedule []time.Duration, now time.Time) (bridge.Status, sql.NullInt64, string) {
	if sendErr == nil {
		return bridge.StatusSent, sql.NullInt64{}, ""
	}
	delay, retry := durable.Schedule(schedule).After(attempts)
	if !retry {
		return bridge.StatusFailed, sql.NullInt64{}, sendErr.Error()
	}
	return bridge.StatusQueued, sql.NullInt64{Int64: now.Add(delay).UnixMilli(), Valid: true}, sendErr.Error()
}

// receiptMoves reports whether a receipt of status to moves a message in
// status from: forward only, and never to Failed, which only the queue
// decides (bridge.Status.Advances allows Queued -> Failed for the queue).
func receiptMoves(from, to bridge.Status) bool {
	return to != bridge.StatusFailed && from.Advances(to)
}
