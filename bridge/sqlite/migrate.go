package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// Migrate brings db's schema up to date. migrations[i] moves the schema from
// version i to i+1; SQLite's user_version records the version reached. Each
// step runs in its own transaction with its version bump, so a crash leaves
// the schema at a whole version. A database newer than this binary is
// refused rather than guessed at.
func Migrate(ctx context.Context, db *sql.DB, migrations []string) error {
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this bridge knows (%d): downgrade is not supported", version, len(migrations))
	}
	for v := version; v < len(migrations); v++ {
		if err := migrateStep(ctx, db, v+1, migrations[v]); err != nil {
			return err
		}
	}
	return nil
}

func migrateStep(ctx context.Context, db *sql.DB, to int, ddl string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate to schema %d: %w", to, err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op once committed
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("migrate to schema %d: %w", to, err)
	}
	// PRAGMA takes no bind parameters; to is an int we produced.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version=%d", to)); err != nil {
		return fmt.Errorf("migrate to schema %d: %w", to, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate to schema %d: %w", to, err)
	}
	return nil
}
