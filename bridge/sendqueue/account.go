package sendqueue

import (
	"context"
	"database/sql"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// Accounts names the linked account (whatsapp.Session): a message belongs
// to the account linked when it was accepted, or, when none was, to the
// first one linked after; it is never sent from another.
type Accounts interface {
	// Account is the linked account's number; empty while none is linked.
	Account() string
}

// account is the account a message accepted now belongs to; empty: the next
// one linked.
func (q *Queue) account() string {
	if q.opts.Accounts == nil {
		return ""
	}
	return q.opts.Accounts.Account()
}

// checkAccount refuses to send a message of another account: it failed
// with reason logged_out when its account went (SessionChanged), and this
// catches what raced with that (a message stored while the logout's
// transaction ran).
func (q *Queue) checkAccount(owner string) error {
	current := q.account()
	if owner == "" || owner == current || q.opts.Accounts == nil {
		return nil
	}
	if current == "" {
		return bridge.ErrNotLinked // the next account to link decides
	}
	return bridge.ErrLoggedOut
}

// Statements of the session's account changes.
const (
	adoptMessages = `UPDATE messages SET account = ? WHERE account = '' AND status = 'Queued'`
	failOrphans   = `UPDATE messages SET status = 'Failed', last_error = ?, next_attempt_at = NULL, updated_at = ?
		WHERE account != '' AND status = 'Queued' RETURNING ` + messageColumns
)

// SessionChanged applies a change of the session's state to the messages,
// in tx, the transaction that stores the state (the session's Events): when
// an account is linked, the waiting messages that belong to none become
// its; when none is linked any more (logout, or WhatsApp removed the
// device), the waiting messages of the account that went become Failed
// with reason logged_out, and their message.status events commit with it.
func (l *MessageLog) SessionChanged(ctx context.Context, tx *sql.Tx, s bridge.SessionStatus) error {
	if s.Account != "" {
		_, err := l.stmts.Exec(ctx, tx, adoptMessages, s.Account)
		return err
	}
	if s.State != contract.StateUnpaired && s.State != contract.StateLoggedOut {
		return nil
	}
	now := l.now()
	rows, err := tx.QueryContext(ctx, failOrphans, bridge.FailLoggedOut, now.UnixMilli())
	if err != nil {
		return err
	}
	var failed []row
	for rows.Next() {
		m, err := scanRow(rows)
		if err != nil {
			_ = rows.Close()
			return err
		}
		failed = append(failed, m)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, m := range failed {
		if err := l.countOutcome(ctx, tx, bridge.StatusFailed, now); err != nil {
			return err
		}
		if err := l.events.MessageStatus(ctx, tx, m.Message); err != nil {
			return err
		}
		l.observer.MessageStatus(bridge.StatusFailed)
	}
	return nil
}
