package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// stateStore keeps the session's status in bridge.db's session_state row.
// With a batcher the row is written in its transactions, and onChange, when
// set, runs in the transaction of every write that changes the state or its
// reason (the webhook outbox's session.status commits with the row).
type stateStore struct {
	db       *sql.DB
	batcher  *sqlite.Batcher
	onChange func(ctx context.Context, tx *sql.Tx, s Status) error
}

func (p stateStore) load(ctx context.Context) (Status, error) {
	var (
		s             Status
		since, beat   sql.NullInt64
		state, reason string
	)
	err := p.db.QueryRowContext(ctx,
		`SELECT state, reason, account, push_name, connected_since, last_heartbeat FROM session_state WHERE id = 1`).
		Scan(&state, &reason, &s.Account, &s.PushName, &since, &beat)
	if errors.Is(err, sql.ErrNoRows) {
		return Status{}, nil
	}
	if err != nil {
		return Status{}, fmt.Errorf("load session state: %w", err)
	}
	s.State, s.Reason = State(state), Reason(reason)
	s.ConnectedSince, s.LastHeartbeat = fromMillis(since), fromMillis(beat)
	return s, nil
}

// save writes s; changed says that its state or reason differ from the
// last saved ones.
func (p stateStore) save(ctx context.Context, s Status, now time.Time, changed bool) error {
	if p.batcher == nil {
		return p.write(ctx, p.db, s, now)
	}
	return p.batcher.Do(ctx, func(tx *sql.Tx) error {
		if err := p.write(ctx, tx, s, now); err != nil {
			return err
		}
		if changed && p.onChange != nil {
			return p.onChange(ctx, tx, s)
		}
		return nil
	})
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (p stateStore) write(ctx context.Context, db execer, s Status, now time.Time) error {
	_, err := db.ExecContext(ctx, `
		INSERT INTO session_state (id, state, reason, account, push_name, connected_since, last_heartbeat, updated_at)
		VALUES (1, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET state = excluded.state, reason = excluded.reason,
			account = excluded.account, push_name = excluded.push_name,
			connected_since = excluded.connected_since, last_heartbeat = excluded.last_heartbeat,
			updated_at = excluded.updated_at`,
		string(s.State), string(s.Reason), s.Account, s.PushName,
		toMillis(s.ConnectedSince), toMillis(s.LastHeartbeat), now.UnixMilli())
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
