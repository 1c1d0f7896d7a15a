// Package bridgedb opens bridge.db, the bridge's own encrypted database, and
// owns its schema. The packages that keep state in it (session, and later the
// send queue and the webhook outbox) each query their own tables; keeping the
// migrations in one ordered list here means a single schema version for the
// file, and lets one transaction span tables (a state change and the event it
// causes are committed together).
package bridgedb

import (
	"context"
	"database/sql"

	"github.com/msgbridge/msgbridge/bridge/store"
)

// purpose separates bridge.db's encryption key from the other databases'.
const purpose = "bridge"

// Open opens (creating when absent) and migrates bridge.db at path.
func Open(ctx context.Context, path string, masterKey []byte) (*sql.DB, error) {
	db, err := store.Open(ctx, path, masterKey, purpose)
	if err != nil {
		return nil, err
	}
	if err := store.Migrate(ctx, db, migrations); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// migrations are applied in order; append, never edit a released step.
// Times are Unix milliseconds (UTC), NULL when unknown.
var migrations = []string{
	// 1: the session's state and heartbeat, one row.
	`CREATE TABLE session_state (
		id              INTEGER PRIMARY KEY CHECK (id = 1),
		state           TEXT    NOT NULL,
		reason          TEXT    NOT NULL DEFAULT '',
		account         TEXT    NOT NULL DEFAULT '',
		push_name       TEXT    NOT NULL DEFAULT '',
		connected_since INTEGER,
		last_heartbeat  INTEGER,
		updated_at      INTEGER NOT NULL
	)`,
}

// Verify checks that an existing bridge.db decrypts with masterKey, changing
// nothing; an absent one passes.
func Verify(ctx context.Context, path string, masterKey []byte) error {
	return store.Verify(ctx, path, masterKey, purpose)
}
