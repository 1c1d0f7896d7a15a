package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// A client that sends 30 messages at once sees them arrive over minutes
// (SEND_RATE): the answer to each request and /health say when, so that
// pacing is never mistaken for a stuck queue.

// Place is where a Queued message stands when a request is answered.
type Place struct {
	// Position is its place among the waiting messages: 1 goes next.
	Position int
	// ScheduledAt is when it is expected to go, from the pace, its retry
	// and a restriction; an estimate, since pacing is jittered and earlier
	// messages may fail or be retried.
	ScheduledAt time.Time
}

// scheduledAt is when a message due at due goes, ahead messages before it:
// not before now, its due time, the pace's next slot or the end of a
// restriction, and then one mean paced gap per message ahead.
func scheduledAt(now, due, paceReady, heldUntil time.Time, ahead int, interval time.Duration) time.Time {
	start := now
	for _, t := range []time.Time{due, paceReady, heldUntil} {
		if t.After(start) {
			start = t
		}
	}
	return start.Add(time.Duration(ahead) * meanGap(interval))
}

// meanGap is the average pause between two paced attempts: the interval
// plus half the jitter span (pacing.go).
func meanGap(interval time.Duration) time.Duration {
	return paceGap(interval, 0.5)
}

// maxCountedAhead bounds how many waiting messages an answer counts before
// each of its own. Counting is a scan of the due index, so an exact place in
// a queue of thousands (a burst accepted while unlinked) made every
// accepted request slower the longer the queue: 2,000 sends ran at 28 % of
// their rate without places. Beyond the bound the place is
// maxCountedAhead+1 and its time a lower bound (at the default 20/m, 100
// messages ahead are over five minutes away); /health's depth counts all.
const maxCountedAhead = 100

// selectAhead counts, up to maxCountedAhead each, the waiting messages the
// worker takes before the one due at ?1 with id ?2: due earlier, or at the
// same time and accepted earlier. Two counts rather than one with OR, so
// that each is a range of the due index (messages_due), not a table scan.
// The bound is written into the SQL, not bound: SQLite reads a bound LIMIT
// when it plans the statement, so a prepared statement with LIMIT ? is
// planned again at every run (issue 47: a tenth of the accept path).
var selectAhead = `SELECT
	(SELECT count(*) FROM (SELECT 1 FROM messages WHERE next_attempt_at < ?1 LIMIT ` + strconv.Itoa(maxCountedAhead) + `)) +
	(SELECT count(*) FROM (SELECT 1 FROM messages WHERE next_attempt_at = ?1
		AND rowid < (SELECT rowid FROM messages WHERE id = ?2) LIMIT ` + strconv.Itoa(maxCountedAhead) + `))`

// places reads where each Queued message of msgs stands; the others get
// the zero Place.
func (q *Queue) places(ctx context.Context, msgs []row) ([]Place, error) {
	out := make([]Place, len(msgs))
	now := q.now()
	for i, m := range msgs {
		if m.Status != bridge.StatusQueued {
			continue
		}
		var due sql.NullInt64
		if err := q.stmts.ReadRow(ctx, `SELECT next_attempt_at FROM messages WHERE id = ?`, m.ID).Scan(&due); err != nil {
			return nil, err
		}
		if !due.Valid { // a receipt or an attempt ended it meanwhile
			continue
		}
		var ahead int
		if err := q.stmts.ReadRow(ctx, selectAhead, due.Int64, m.ID).Scan(&ahead); err != nil {
			return nil, err
		}
		ahead = min(ahead, maxCountedAhead)
		out[i] = Place{Position: ahead + 1, ScheduledAt: scheduledAt(now, time.UnixMilli(due.Int64), q.pace.readyAt(),
			q.heldUntil(now), ahead, q.pace.interval)}
	}
	return out, nil
}

// Pace is the send queue as /health and the admin state show it.
type Pace struct {
	Depth int             // messages waiting for an attempt
	Rate  bridge.SendRate // SEND_RATE
	// NextSendAt is when the next attempt is expected; zero when nothing
	// waits.
	NextSendAt time.Time
}

// Pace reads the queue's depth and when it sends next.
func (q *Queue) Pace(ctx context.Context) (Pace, error) {
	p := Pace{Rate: q.opts.Rate}
	var err error
	if p.Depth, err = q.Depth(ctx); err != nil {
		return p, err
	}
	var next sql.NullInt64
	err = q.db.QueryRowContext(ctx, selectNextHeadDue).Scan(&next)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !next.Valid) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	now := q.now()
	p.NextSendAt = scheduledAt(now, time.UnixMilli(next.Int64), q.pace.readyAt(), q.heldUntil(now), 0, q.pace.interval)
	return p, nil
}
