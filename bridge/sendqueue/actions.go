package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Action is what a reaction, edit or revoke item acts on. The edit's new
// text is the item's Text.
type Action struct {
	// TargetID is the WhatsApp id of the message acted on.
	TargetID string
	// TargetSender is who sent the target when it was received; zero for a
	// message of the log (the account's own).
	TargetSender bridge.Recipient
	// Emoji is a reaction's; empty removes it.
	Emoji string
}

// storeMessages inserts msgs and stamps them with account and their actions.
func (q *Queue) storeMessages(ctx context.Context, tx *sql.Tx, msgs []row, items []Item, now time.Time, account string) error {
	if err := q.insertMessages(ctx, tx, msgs, items, now); err != nil {
		return err
	}
	return q.stampMessages(ctx, tx, msgs, items, account)
}

// stampMessages stores what the insert does not: the account the messages
// belong to, and the message each action acts on (who sent it is in the
// details). It runs in Submit's transaction.
func (q *Queue) stampMessages(ctx context.Context, tx *sql.Tx, msgs []row, items []Item, account string) error {
	for i, m := range msgs {
		a := items[i].Action
		if a == nil && account == "" {
			continue
		}
		var target, emoji string
		if a != nil {
			target, emoji = a.TargetID, a.Emoji
		}
		if _, err := q.stmts.Exec(ctx, tx, `UPDATE messages SET account = ?, target_id = ?, emoji = ? WHERE id = ?`,
			account, target, emoji, m.ID); err != nil {
			return fmt.Errorf("store message: %w", err)
		}
	}
	return nil
}

// extras are the columns of a message that only the attempt reads.
type extras struct {
	account, targetID, emoji, details string
	targetCreated                     sql.NullInt64 // the target's, when it is in the log
}

const selectExtras = `SELECT m.account, m.target_id, m.emoji, m.details, t.created_at FROM messages m
	LEFT JOIN messages t ON t.whatsapp_id = m.target_id AND m.target_id != '' WHERE m.id = ?`

// prepare is what an attempt does before it sends m: it refuses a message
// of another account, checks that a phone number is on WhatsApp, and
// completes an action with its target. The error is the attempt's.
func (q *Queue) prepare(ctx context.Context, m *row) (bridge.Outgoing, error) {
	out := m.outgoing()
	var x extras
	if err := q.db.QueryRowContext(ctx, selectExtras, m.ID).Scan(&x.account, &x.targetID, &x.emoji, &x.details,
		&x.targetCreated); err != nil {
		return out, fmt.Errorf("read message %s: %w", m.ID, err)
	}
	if err := q.checkAccount(x.account); err != nil {
		return out, err
	}
	if m.Type.IsAction() {
		if err := completeAction(&out, x, q.now()); err != nil {
			return out, err
		}
	}
	if out.Status != nil {
		return out, q.prepareAudience(ctx, out.Status)
	}
	return out, q.checkRecipient(ctx, m.Recipient)
}

// completeAction sets out's target from x; an edit past WhatsApp's window
// fails for good.
func completeAction(out *bridge.Outgoing, x extras, now time.Time) error {
	out.TargetID, out.Emoji = x.targetID, x.emoji
	d, err := decodeDetails(x.details)
	if err != nil {
		return err
	}
	if d.TargetSender != "" {
		sender, err := bridge.RecipientFromJID(d.TargetSender)
		if err != nil {
			return err
		}
		out.TargetSender = sender
	}
	if out.Type == bridge.TypeEdit && x.targetCreated.Valid &&
		now.Sub(time.UnixMilli(x.targetCreated.Int64)) > bridge.EditWindow {
		return bridge.ErrEditWindowExpired
	}
	return nil
}

// errMessageNotFound: no message of the log, sent or received, has this id.
func errMessageNotFound() error {
	return bridge.Errorf(bridge.KindNotFound, bridge.CodeMessageNotFound, "no message with this id in the message log")
}

// Revoked reports whether a revoke of the message with WhatsApp id
// whatsappID is in the log and did not fail: an edit or another revoke of
// it could only waste a send.
func (l *MessageLog) Revoked(ctx context.Context, whatsappID string) (bool, error) {
	var found bool
	err := l.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM messages WHERE type = ? AND target_id = ? AND status != ?)`,
		bridge.TypeRevoke, whatsappID, bridge.StatusFailed).Scan(&found)
	if err != nil {
		return false, readFailed(err)
	}
	return found, nil
}

// FindMessage returns the message of the log with id as its log id or its
// WhatsApp id (actions name their target either way); a bridge.Error of
// KindNotFound (message_not_found) when there is none.
func (l *MessageLog) FindMessage(ctx context.Context, id string) (bridge.Message, error) {
	m, err := scanRow(l.db.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE id = ?
		UNION ALL SELECT `+messageColumns+` FROM messages WHERE whatsapp_id = ? LIMIT 1`, id, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return bridge.Message{}, errMessageNotFound()
	case err != nil:
		return bridge.Message{}, readFailed(err)
	}
	return m.Message, nil
}
