package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Receipt applies WhatsApp's receipt (see AdvanceStatus).
func (l *MessageLog) Receipt(ctx context.Context, r bridge.Receipt) error {
	_, err := l.AdvanceStatus(ctx, r.WhatsAppIDs, r.Status)
	return err
}

// AdvanceStatus applies a receipt: the messages with these WhatsApp IDs move
// to status if that is forward (a late Delivered after Read is dropped, and
// a receipt never fails a message). It returns the messages that changed.
func (l *MessageLog) AdvanceStatus(ctx context.Context, whatsappIDs []string, status bridge.Status) ([]bridge.Message, error) {
	var changed []bridge.Message
	now := l.now()
	err := l.batcher.Do(ctx, func(tx *sql.Tx) error {
		changed = changed[:0]
		for _, wid := range whatsappIDs {
			m, moved, err := l.advance(ctx, tx, wid, status, now)
			if err != nil {
				return err
			}
			if moved {
				changed = append(changed, m)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("apply receipt: %w", err)
	}
	for range changed {
		l.observer.MessageStatus(status)
	}
	return changed, nil
}

const (
	selectByWhatsAppID = `SELECT ` + messageColumns + ` FROM messages WHERE whatsapp_id = ?`
	advanceStatus      = `UPDATE messages SET status = ?, next_attempt_at = NULL, updated_at = ? WHERE id = ?`
)

// advance moves the message with WhatsApp ID wid to status in tx, if that
// is forward, and reports whether it moved.
func (l *MessageLog) advance(ctx context.Context, tx *sql.Tx, wid string, status bridge.Status, now time.Time) (bridge.Message, bool, error) {
	m, err := scanRow(l.stmts.QueryRow(ctx, tx, selectByWhatsAppID, wid))
	if errors.Is(err, sql.ErrNoRows) {
		return bridge.Message{}, false, nil // not one of ours (sent from the phone)
	}
	if err != nil || !receiptMoves(m.Status, status) {
		return bridge.Message{}, false, err
	}
	if m.Status == bridge.StatusQueued { // a receipt before the attempt's ack: it was sent
		if err := l.countDelivery(ctx, tx, now.UTC().Format(time.DateOnly), true); err != nil {
			return bridge.Message{}, false, err
		}
	}
	// Each status the message passed, in order (a Delivered receipt that
	// overtook the attempt's ack passed Sent): a backend that waits for
	// Sent hears it. Each is stored before its event, in this transaction.
	m.UpdatedAt = now
	for _, st := range m.Status.Through(status) {
		if _, err := l.stmts.Exec(ctx, tx, advanceStatus, string(st), now.UnixMilli(), m.ID); err != nil {
			return bridge.Message{}, false, err
		}
		m.Status = st
		if err := l.events.MessageStatus(ctx, tx, m.Message); err != nil {
			return bridge.Message{}, false, err
		}
	}
	return m.Message, true, nil
}

// The daily delivery rollup is kept by the log (a receipt can be the first
// news that a message arrived) and by the queue (attempt outcomes).

// countOutcome adds a final outcome (Sent or Failed) to the day's rollup.
func (l *MessageLog) countOutcome(ctx context.Context, tx *sql.Tx, status bridge.Status, now time.Time) error {
	if status != bridge.StatusSent && status != bridge.StatusFailed {
		return nil
	}
	return l.countDelivery(ctx, tx, now.UTC().Format(time.DateOnly), status == bridge.StatusSent)
}

// countDelivery adds one to the day's success or failed count.
func (l *MessageLog) countDelivery(ctx context.Context, tx *sql.Tx, day string, success bool) error {
	query := `INSERT INTO delivery_daily (day, failed) VALUES (?, 1) ON CONFLICT (day) DO UPDATE SET failed = failed + 1`
	if success {
		query = `INSERT INTO delivery_daily (day, success) VALUES (?, 1) ON CONFLICT (day) DO UPDATE SET success = success + 1`
	}
	_, err := l.stmts.Exec(ctx, tx, query, day)
	return err
}
