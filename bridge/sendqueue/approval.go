package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Approval before sending: the messages of a key with approval are stored
// AwaitingApproval, with no attempt due, so that nothing of them reaches
// WhatsApp until a person approves them; then they are Queued and go
// through the queue like any other (pace, order, retries). A rejection, or
// no answer within the approval timeout, fails them. Each change goes
// through Events in its transaction (message.approval, message.status).

// holdForApproval marks new messages AwaitingApproval, due never.
func holdForApproval(msgs []row) {
	for i := range msgs {
		msgs[i].Status, msgs[i].nextAttempt = bridge.StatusAwaitingApproval, sql.NullInt64{}
	}
}

// ErrNotAwaiting answers a decision on a message that awaits none: decided
// already, expired, or never held.
var ErrNotAwaiting = bridge.Errorf(bridge.KindConflict, bridge.CodeNotAwaitingApproval,
	"the message awaits no approval: it was approved, rejected or expired, or never held")

// Held is a message awaiting approval with what it would send, so that a
// person decides on what they see.
type Held struct {
	bridge.Message
	// Text is a text's body or a caption.
	Text string
}

// Awaiting lists the messages awaiting approval, oldest first.
func (q *Queue) Awaiting(ctx context.Context) ([]Held, error) {
	rows, err := q.db.QueryContext(ctx, `SELECT `+messageColumns+` FROM messages
		WHERE status = 'AwaitingApproval' ORDER BY created_at, id`)
	if err != nil {
		return nil, readFailed(err)
	}
	defer func() { _ = rows.Close() }()
	var out []Held
	for rows.Next() {
		m, err := scanRow(rows)
		if err != nil {
			return nil, readFailed(err)
		}
		out = append(out, Held{Message: m.Message, Text: m.body})
	}
	if err := rows.Err(); err != nil {
		return nil, readFailed(err)
	}
	return out, nil
}

// Approve queues message id, which awaited approval, due now: it goes
// with the queue's pace and its chat's order.
func (q *Queue) Approve(ctx context.Context, id string) (bridge.Message, error) {
	now := q.now()
	m, err := q.decide(ctx, id, `UPDATE messages SET status = 'Queued', next_attempt_at = ?, updated_at = ?
		WHERE id = ? AND status = 'AwaitingApproval' RETURNING `+messageColumns, now.UnixMilli(), now.UnixMilli(), id)
	if err != nil {
		return bridge.Message{}, err
	}
	q.observer.MessageStatus(bridge.StatusQueued)
	q.wake.Notify()
	return m.Message, nil
}

// Reject fails message id, which awaited approval (approval_rejected):
// nothing of it is sent.
func (q *Queue) Reject(ctx context.Context, id string) (bridge.Message, error) {
	return q.fail(ctx, id, bridge.FailApprovalRejected)
}

// fail ends an awaiting message with reason and deletes its attachment.
func (q *Queue) fail(ctx context.Context, id, reason string) (bridge.Message, error) {
	now := q.now()
	m, err := q.decide(ctx, id, `UPDATE messages SET status = 'Failed', last_error = ?, next_attempt_at = NULL, updated_at = ?
		WHERE id = ? AND status = 'AwaitingApproval' RETURNING `+messageColumns, reason, now.UnixMilli(), id)
	if err != nil {
		return bridge.Message{}, err
	}
	q.observer.MessageStatus(bridge.StatusFailed)
	if m.filePath != "" {
		_ = os.Remove(m.filePath) // a leftover is swept at the next start (SweepSpool)
	}
	return m.Message, nil
}

// decide runs update, which moves one awaiting message on and returns it,
// with its events, in one transaction.
func (q *Queue) decide(ctx context.Context, id, update string, args ...any) (row, error) {
	var m row
	err := q.batcher.Do(ctx, func(tx *sql.Tx) error {
		var err error
		m, err = scanRow(tx.QueryRowContext(ctx, update, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return q.notAwaiting(ctx, tx, id)
		}
		if err != nil {
			return fmt.Errorf("decide approval: %w", err)
		}
		if err := q.countOutcome(ctx, tx, m.Status, q.now()); err != nil {
			return err
		}
		return q.events.MessageStatus(ctx, tx, m.Message)
	})
	if err != nil {
		var e *bridge.Error
		if errors.As(err, &e) {
			return row{}, err
		}
		return row{}, bridge.Internal(bridge.CodeStoreFailed, "the decision could not be stored", err)
	}
	return m, nil
}

// notAwaiting tells an unknown message (404) from one awaiting nothing
// (409).
func (q *Queue) notAwaiting(ctx context.Context, tx *sql.Tx, id string) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM messages WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return errNotFound()
	}
	if err != nil {
		return err
	}
	return ErrNotAwaiting
}

// ExpireApprovals fails the messages that awaited approval for timeout or
// longer (approval_expired) and returns how many.
func (q *Queue) ExpireApprovals(ctx context.Context, timeout time.Duration) (int, error) {
	rows, err := q.db.QueryContext(ctx, `SELECT id FROM messages WHERE status = 'AwaitingApproval' AND created_at <= ?
		ORDER BY created_at, id`, q.now().Add(-timeout).UnixMilli())
	if err != nil {
		return 0, readFailed(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			_ = rows.Close()
			return 0, readFailed(err)
		}
		ids = append(ids, id)
	}
	_ = rows.Close()
	n := 0
	for _, id := range ids {
		switch _, err := q.fail(ctx, id, bridge.FailApprovalExpired); {
		case err == nil:
			n++
		case errors.Is(err, ErrNotAwaiting): // decided meanwhile
		default:
			return n, err
		}
	}
	return n, nil
}

// RunApprovalExpiry expires unanswered approvals until ctx ends, looking
// every tenth of timeout (at least every second, at most every minute): a
// message expires within that much after its time.
func (q *Queue) RunApprovalExpiry(ctx context.Context, timeout time.Duration) error {
	every := min(max(timeout/10, time.Second), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := q.ExpireApprovals(ctx, timeout); err != nil && ctx.Err() == nil {
			q.logger.Error(err, "expire approvals")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
