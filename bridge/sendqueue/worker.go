package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/durable"
)

// dueBatch bounds how many due messages one pass reads.
const dueBatch = 64

// maxIdle is the longest the worker sleeps without looking at the table; a
// safety net, since every new due time also wakes it.
const maxIdle = time.Minute

// pruneEvery is how often Run deletes idempotency keys past their window.
const pruneEvery = time.Hour

// Run attempts due messages until ctx ends: retries on their schedule, and
// after a restart every message whose attempt a crash interrupted. Messages
// are attempted one at a time, oldest due first, each chat in the order its
// messages were accepted (order.go), at the pace of SEND_RATE (pacing.go),
// and not at all while WhatsApp restricts sending (restrict.go).
func (q *Queue) Run(ctx context.Context) error {
	clock := durable.ClockOf(q.now)
	pruned := make(chan struct{})
	go func() {
		defer close(pruned)
		durable.Every(ctx, clock, pruneEvery, func(ctx context.Context) {
			if err := q.pruneIdempotencyKeys(ctx); err != nil && ctx.Err() == nil {
				q.logger.Error(err, "prune idempotency keys")
			}
		})
	}()
	durable.Loop{Pass: q.attemptDue, NextDue: q.nextAttempt, Wake: q.wake, MaxIdle: maxIdle, Clock: clock}.Run(ctx)
	<-pruned
	return nil
}

// attemptDue attempts the chat heads due now while the pace allows. It
// reports More after a full batch, since more may be due right now, and
// Held when a due head was left to the request attempting it.
func (q *Queue) attemptDue(ctx context.Context) (p durable.Pass) {
	if !q.heldUntil(q.now()).IsZero() || q.diskLow() {
		return p
	}
	due, err := q.query(ctx, selectDueHeads, q.now().UnixMilli())
	if err != nil {
		if ctx.Err() == nil {
			q.logger.Error(err, "read due messages")
		}
		return p
	}
	for i := 0; i < len(due) && ctx.Err() == nil; i++ {
		m := &due[i]
		if !q.claims.TryClaim(m.ID) {
			p.Held = true // its immediate attempt runs in a request
			continue
		}
		if !q.stillDue(ctx, m) {
			q.release(due[i : i+1])
			continue
		}
		if !q.heldUntil(q.now()).IsZero() || !q.pace.take(q.now()) {
			q.release(due[i : i+1])
			return p
		}
		q.attempt(ctx, m)
		q.release(due[i : i+1])
	}
	p.More = len(due) == dueBatch
	return p
}

// nextAttempt is when the worker may attempt again: when the next chat
// head is due, but not before the pace and a restriction allow it.
func (q *Queue) nextAttempt(ctx context.Context) (time.Time, bool) {
	var next sql.NullInt64
	err := q.stmts.ReadRow(ctx, selectNextHeadDue).Scan(&next)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !next.Valid) {
		return time.Time{}, false // nothing waits
	}
	if err != nil {
		if ctx.Err() == nil {
			q.logger.Error(err, "read next due time")
		}
		return time.Time{}, false
	}
	at := time.UnixMilli(next.Int64)
	var diskRecheck time.Time
	if q.diskLow() {
		diskRecheck = q.now().Add(diskLowRecheck) // held, not spinning on due heads
	}
	for _, later := range []time.Time{q.pace.readyAt(), q.heldUntil(q.now()), diskRecheck} {
		if later.After(at) {
			at = later
		}
	}
	return at, true
}

// selectStillDue reads one message again if it is still due now.
const selectStillDue = `SELECT ` + messageColumns + ` FROM messages WHERE id = ? AND next_attempt_at <= ?`

// stillDue re-reads m once the worker holds its claim, and reports whether
// it is still due. The batch was read earlier: a request's immediate attempt
// that was running then may have ended since (sent, or given a later retry)
// and released its claim; attempting the stale copy would send the message
// a second time with the same WhatsApp id. A read error leaves it to the
// next pass.
func (q *Queue) stillDue(ctx context.Context, m *row) bool {
	fresh, err := scanRow(q.stmts.ReadRow(ctx, selectStillDue, m.ID, q.now().UnixMilli()))
	if err != nil {
		if !errors.Is(err, sql.ErrNoRows) && ctx.Err() == nil {
			q.logger.Error(err, "read due message", "message", m.ID)
		}
		return false
	}
	*m = fresh
	return true
}

// diskLowRecheck is how often a queue held by a low disk looks again.
const diskLowRecheck = time.Second

// diskLow reports a disk below its reserve: the bridge then holds its link
// down, so attempts could only fail and spend the messages' retries; they
// wait instead, like a restriction's hold.
func (q *Queue) diskLow() bool {
	return q.opts.Space != nil && q.opts.Space.CheckSpace() != nil
}

// attemptAccepted makes the immediate attempts of a request's messages in
// order, as far as the pace, a restriction and the order of their chat
// allow without waiting: accepting a request never waits for pacing. The
// rest is left to the worker.
func (q *Queue) attemptAccepted(ctx context.Context, msgs []row) {
	for i := range msgs {
		// An earlier item that is still Queued waits for a retry; the
		// request still holds its claim, so its chat's order would make
		// this one wait for it until inFlightWait.
		if i > 0 && msgs[i-1].Status == bridge.StatusQueued {
			q.wake.Notify()
			return
		}
		if !q.mayAttemptNow(ctx, &msgs[i]) {
			q.wake.Notify()
			return
		}
		q.attempt(ctx, &msgs[i])
	}
}

func (q *Queue) mayAttemptNow(ctx context.Context, m *row) bool {
	if !q.heldUntil(q.now()).IsZero() {
		return false
	}
	return q.clearOfEarlier(ctx, m.ID) && q.pace.take(q.now())
}

// SweepSpool deletes files in dir that no waiting message or kept upload
// refers to: the attachments of requests that a crash interrupted before
// they were stored. Call it at start-up, before the API accepts requests.
func (q *Queue) SweepSpool(ctx context.Context, dir string) error {
	rows, err := q.db.QueryContext(ctx, `SELECT file_path FROM messages WHERE status IN ('Queued', 'AwaitingApproval') AND file_path != ''
		UNION ALL SELECT path FROM uploads`)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			_ = rows.Close()
			return err
		}
		keep[p] = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !keep[p] {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
	}
	return nil
}
