package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/contract"
)

// stateStore keeps the session's status in bridge.db's session_state row.
// The row is written in a transaction (the batcher's, when there is one),
// and the message log and the outbox hear, in that transaction, every write
// that changes the state or its reason (the webhook outbox's session.status
// commits with the row).
type stateStore struct {
	db       *sql.DB
	batcher  *sqlite.Batcher
	messages MessageLog
	outbox   Outbox
}

func (p stateStore) load(ctx context.Context) (bridge.SessionStatus, error) {
	var (
		s             bridge.SessionStatus
		since, beat   sql.NullInt64
		restricted    sql.NullInt64
		state, reason string
	)
	err := p.db.QueryRowContext(ctx,
		`SELECT state, reason, account, push_name, connected_since, last_heartbeat, restricted_until FROM session_state WHERE id = 1`).
		Scan(&state, &reason, &s.Account, &s.PushName, &since, &beat, &restricted)
	if errors.Is(err, sql.ErrNoRows) {
		return bridge.SessionStatus{}, nil
	}
	if err != nil {
		return bridge.SessionStatus{}, fmt.Errorf("load session state: %w", err)
	}
	s.State, s.Reason = contract.SessionState(state), contract.Reason(reason)
	s.ConnectedSince, s.LastHeartbeat = fromMillis(since), fromMillis(beat)
	s.RestrictedUntil = fromMillis(restricted)
	return s, nil
}

// save writes s; changed says that its state or reason differ from the
// last saved ones.
func (p stateStore) save(ctx context.Context, s bridge.SessionStatus, now time.Time, changed bool) error {
	return p.inTx(ctx, func(tx *sql.Tx) error {
		if err := p.write(ctx, tx, s, now); err != nil {
			return err
		}
		if changed {
			return p.stateChanged(ctx, tx, s)
		}
		return nil
	})
}

// inTx runs f in the batcher's transaction, or in its own without one.
func (p stateStore) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	if p.batcher != nil {
		return p.batcher.Do(ctx, f)
	}
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save session state: %w", err)
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (p stateStore) write(ctx context.Context, tx *sql.Tx, s bridge.SessionStatus, now time.Time) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO session_state (id, state, reason, account, push_name, connected_since, last_heartbeat, restricted_until, updated_at)
		VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET state = excluded.state, reason = excluded.reason,
			account = excluded.account, push_name = excluded.push_name,
			connected_since = excluded.connected_since, last_heartbeat = excluded.last_heartbeat,
			restricted_until = excluded.restricted_until, updated_at = excluded.updated_at`,
		string(s.State), string(s.Reason), s.Account, s.PushName,
		toMillis(s.ConnectedSince), toMillis(s.LastHeartbeat), toMillis(s.RestrictedUntil), now.UnixMilli())
	if err != nil {
		return fmt.Errorf("save session state: %w", err)
	}
	return nil
}

func toMillis(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

func fromMillis(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

// stateChanged tells the message log and the outbox of a new state, in the
// transaction that stores it.
func (p stateStore) stateChanged(ctx context.Context, tx *sql.Tx, s bridge.SessionStatus) error {
	if p.messages != nil {
		if err := p.messages.SessionChanged(ctx, tx, s); err != nil {
			return err
		}
	}
	if p.outbox != nil {
		return p.outbox.SessionStatus(ctx, tx, s)
	}
	return nil
}
