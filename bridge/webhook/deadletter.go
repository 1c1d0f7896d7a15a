package webhook

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Dead-letter errors, mapped to 404 and 409.
var (
	ErrUnknown = errors.New("no such webhook event")
	ErrNotDead = errors.New("the webhook event is not a dead letter")
)

// DeadLetter is an event whose retries ran out.
type DeadLetter struct {
	ID           int64
	Subscription string
	WebhookID    string
	Event        string
	Attempts     int
	LastError    string
	CreatedAt    time.Time
}

// maxDeadLetters bounds one listing.
const maxDeadLetters = 1000

// Failed lists the dead letters, newest first.
func (o *Outbox) Failed(ctx context.Context) ([]DeadLetter, error) {
	rows, err := o.opts.DB.QueryContext(ctx, `SELECT id, subscription, webhook_id, event, attempts, last_error, created_at
		FROM webhook_outbox WHERE status = 'dead' ORDER BY created_at DESC, id DESC LIMIT ?`, maxDeadLetters)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := []DeadLetter{}
	for rows.Next() {
		var (
			d       DeadLetter
			created int64
		)
		if err := rows.Scan(&d.ID, &d.Subscription, &d.WebhookID, &d.Event, &d.Attempts, &d.LastError, &created); err != nil {
			return nil, err
		}
		d.CreatedAt = time.UnixMilli(created).UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}

// redeliver makes a dead letter pending again: the head of its key, or,
// while its key has a pending row, behind it (the triggers make it the head
// when that row ends).
const redeliver = `UPDATE webhook_outbox AS o SET status = 'pending', next_attempt_at = ?, expires_at = ?,
		behind = EXISTS (SELECT 1 FROM webhook_outbox p WHERE p.subscription = o.subscription
			AND p.ordering_key = o.ordering_key AND p.status = 'pending')
	WHERE o.id = ?`

// Redeliver puts dead letter id back in the queue, due now, with a new
// retry window. It keeps its webhook-id, so a receiver that did process
// it can tell.
func (o *Outbox) Redeliver(ctx context.Context, id int64) error {
	now := o.opts.Now().UnixMilli()
	err := o.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		var status string
		if err := tx.QueryRowContext(ctx, `SELECT status FROM webhook_outbox WHERE id = ?`, id).Scan(&status); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrUnknown
			}
			return err
		}
		if status != "dead" {
			return ErrNotDead
		}
		_, err := tx.ExecContext(ctx, redeliver, now, now+o.opts.MaxAge.Milliseconds(), id)
		return err
	})
	if err == nil {
		o.wake.Notify()
	}
	return err
}
