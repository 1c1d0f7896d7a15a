package sendqueue

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// attempt sends m once and records the outcome, updating m in place.
func (q *Queue) attempt(ctx context.Context, m *row) {
	q.markSending(m.ID, true)
	defer q.markSending(m.ID, false)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.opts.AttemptTimeout)
	started, prepared := time.Now(), q.now()
	out, sendErr := q.prepare(actx, m)
	q.pace.postpone(q.now().Sub(prepared))
	if sendErr == nil {
		sendErr = q.opts.Sender.Send(actx, out)
	}
	cancel()
	q.observer.SendAttempt(sendErr == nil, time.Since(started))
	if until, deferred := deferredUntil(sendErr); deferred {
		q.deferAttempt(ctx, m, until, sendErr)
		return
	}
	if until, restricted := bridge.RestrictedUntil(sendErr); restricted {
		q.holdRestricted(ctx, m, until, sendErr)
		return
	}
	now := q.now()
	var changed bool
	bg := context.WithoutCancel(ctx)
	recordErr := q.batcher.Do(bg, func(tx *sql.Tx) (err error) {
		changed, err = q.recordAttempt(bg, tx, m, sendErr, now)
		return err
	})
	if recordErr != nil {
		// The attempt's outcome is unknown to the database: the message stays
		// due and is attempted again, with the same WhatsApp ID, which the
		// recipient's phone deduplicates.
		q.logger.Error(recordErr, "record send attempt", "message", m.ID)
		return
	}
	if m.Status != bridge.StatusQueued && m.filePath != "" {
		_ = os.Remove(m.filePath) // done with the attachment
	}
	q.wake.Notify() // a retry is due, or the chat's next message is
	if changed {
		q.observer.MessageStatus(m.Status)
	}
}

// Statements of the attempt bookkeeping.
const (
	recordOutcome = `UPDATE messages SET status = ?, attempts = ?, retry_count = ?, last_error = ?,
		next_attempt_at = ?, updated_at = ? WHERE id = ? AND status = 'Queued'`
	recordLateOutcome = `UPDATE messages SET attempts = ?, retry_count = ?, last_error = '', next_attempt_at = NULL,
		updated_at = ? WHERE id = ? RETURNING status`
)

// recordAttempt stores the outcome of one attempt of m (sendErr nil: sent)
// and reports whether the status changed. Only the claimant of a message
// attempts it, so m.Attempts is the stored count; a receipt can only have
// moved the status forward, and then the attempt did arrive, whatever it
// said (a lost ack).
func (q *Queue) recordAttempt(ctx context.Context, tx *sql.Tx, m *row, sendErr error, now time.Time) (bool, error) {
	attempts := m.Attempts + 1
	status, next, lastErr := outcome(attempts, sendErr, q.opts.Schedule, now)
	res, err := q.stmts.Exec(ctx, tx, recordOutcome, string(status), attempts, attempts-1, lastErr, next, now.UnixMilli(), m.ID)
	if err != nil {
		return false, err
	}
	m.Attempts, m.RetryCount, m.UpdatedAt = attempts, attempts-1, now
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return false, err
		}
		var current string
		if err := q.stmts.QueryRow(ctx, tx, recordLateOutcome, attempts, attempts-1, now.UnixMilli(), m.ID).Scan(&current); err != nil {
			return false, fmt.Errorf("record attempt of %s: %w", m.ID, err)
		}
		m.Status, m.LastError = bridge.Status(current), ""
		return false, nil
	}
	m.Status, m.LastError = status, lastErr
	if status == bridge.StatusQueued {
		return false, nil
	}
	if err := q.countOutcome(ctx, tx, status, now); err != nil {
		return false, err
	}
	return true, q.events.MessageStatus(ctx, tx, m.Message)
}
