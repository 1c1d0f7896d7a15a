package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"time"
)

// dueBatch bounds how many due messages one pass reads.
const dueBatch = 64

// maxIdle is the longest the worker sleeps without looking at the table; a
// safety net, since every new due time also wakes it.
const maxIdle = time.Minute

// Run attempts due messages until ctx ends: retries on their schedule, and
// after a restart every message whose attempt a crash interrupted. Messages
// are attempted one at a time, oldest due first, so that the items of one
// request keep their order.
func (q *Queue) Run(ctx context.Context) error {
	lastPrune := time.Time{}
	for {
		if q.now().Sub(lastPrune) > time.Hour {
			if err := q.pruneIdempotencyKeys(ctx); err != nil && ctx.Err() == nil {
				q.logger.Error(err, "prune idempotency keys")
			}
			lastPrune = q.now()
		}
		n, err := q.attemptDue(ctx)
		if ctx.Err() != nil {
			return nil //nolint:nilerr // shutting down: err is only the cancellation
		}
		if err != nil {
			q.logger.Error(err, "read due messages")
		}
		if n == dueBatch {
			continue // there may be more due right now
		}
		wait, err := q.untilNextDue(ctx)
		if err != nil && ctx.Err() == nil {
			q.logger.Error(err, "read next due time")
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-q.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// attemptDue attempts the messages due now; it returns how many it read.
func (q *Queue) attemptDue(ctx context.Context) (int, error) {
	due, err := q.query(ctx, `SELECT `+messageColumns+` FROM messages WHERE next_attempt_at <= ?
		ORDER BY next_attempt_at, created_at, position LIMIT ?`, q.now().UnixMilli(), dueBatch)
	if err != nil {
		return 0, err
	}
	for i := 0; i < len(due) && ctx.Err() == nil; i++ {
		m := &due[i]
		if !q.tryClaim(m.ID) {
			continue // its immediate attempt runs in a request
		}
		q.attempt(ctx, m)
		q.release(due[i : i+1])
	}
	return len(due), nil
}

func (q *Queue) untilNextDue(ctx context.Context) (time.Duration, error) {
	var next sql.NullInt64
	err := q.db.QueryRowContext(ctx, `SELECT min(next_attempt_at) FROM messages WHERE next_attempt_at IS NOT NULL`).Scan(&next)
	if err != nil {
		return maxIdle, err
	}
	if !next.Valid {
		return maxIdle, nil // nothing waits
	}
	return min(max(time.Until(time.UnixMilli(next.Int64)), 0), maxIdle), nil
}

// SweepSpool deletes files in dir that no waiting message or kept upload
// refers to: the attachments of requests that a crash interrupted before
// they were stored. Call it at start-up, before the API accepts requests.
func (q *Queue) SweepSpool(ctx context.Context, dir string) error {
	rows, err := q.db.QueryContext(ctx, `SELECT file_path FROM messages WHERE status = 'Queued' AND file_path != ''
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
