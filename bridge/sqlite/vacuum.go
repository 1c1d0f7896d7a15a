package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// autoVacuumIncremental is PRAGMA auto_vacuum's value for INCREMENTAL.
const autoVacuumIncremental = 2

// enableIncrementalVacuum lets bridge.db give the pages that retention frees
// back to the file system (IncrementalVacuum). SQLite only changes the mode
// of a file that has tables by rewriting it with VACUUM, so a bridge.db made
// before the mode existed is rewritten once, at start-up, before any other
// part uses it; later starts find the mode set and do nothing.
func enableIncrementalVacuum(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx) // the mode is set on, and applied by, one connection
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	var mode int
	if err := conn.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&mode); err != nil {
		return fmt.Errorf("read auto_vacuum: %w", err)
	}
	if mode == autoVacuumIncremental {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA auto_vacuum=INCREMENTAL"); err != nil {
		return fmt.Errorf("set auto_vacuum: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "VACUUM"); err != nil {
		return fmt.Errorf("vacuum to incremental auto_vacuum: %w", err)
	}
	return nil
}

// IncrementalVacuum gives bridge.db's free pages back to the file system,
// in tx (the one writer's): the file shrinks by what sweeps deleted. Call
// it after a sweep that deleted rows.
func IncrementalVacuum(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, "PRAGMA incremental_vacuum"); err != nil {
		return fmt.Errorf("incremental vacuum: %w", err)
	}
	return nil
}
