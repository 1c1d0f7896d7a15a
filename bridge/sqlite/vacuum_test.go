package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	// The WAL holds recent pages until a checkpoint; count the database file
	// after one, as a person looking at DATA_DIR would.
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// Rows deleted by a sweep give their space back: bridge.db runs in
// incremental auto-vacuum mode (set once at open, also on a file made
// before), and IncrementalVacuum shrinks the file.
func TestDeletedRowsGiveSpaceBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bridge.db")
	db := testutil.OpenBridgeDBAt(t, path)
	var mode int
	if err := db.QueryRow("PRAGMA auto_vacuum").Scan(&mode); err != nil || mode != 2 {
		t.Fatalf("auto_vacuum %d (%v), want 2 (incremental)", mode, err)
	}
	ctx := context.Background()
	body := strings.Repeat("x", 2000)
	if _, err := db.ExecContext(ctx, `CREATE TABLE filler (b TEXT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000)
		INSERT INTO filler (b) SELECT ? || i FROM n`, body); err != nil {
		t.Fatal(err)
	}
	checkpoint(t, db)
	full := fileSize(t, path)
	if _, err := db.ExecContext(ctx, `DELETE FROM filler`); err != nil {
		t.Fatal(err)
	}
	checkpoint(t, db)
	if after := fileSize(t, path); after < full*9/10 {
		t.Fatalf("the file shrank from %d to %d bytes without a vacuum", full, after)
	}
	writer := sqlite.NewBatcher(db)
	defer writer.Close()
	if err := writer.Do(ctx, func(tx *sql.Tx) error { return sqlite.IncrementalVacuum(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	checkpoint(t, db)
	if after := fileSize(t, path); after > full/4 {
		t.Errorf("after the vacuum bridge.db is %d bytes, was %d full", after, full)
	}
}

func checkpoint(t *testing.T, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
}

// A bridge.db made before incremental auto-vacuum existed is rewritten into
// that mode when the bridge opens it, its rows kept.
func TestOldFileTurnsIncremental(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bridge.db")
	ctx := context.Background()
	old, err := sqlite.Open(ctx, path, testutil.TestKey(), "bridge")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`CREATE TABLE kept (v TEXT); INSERT INTO kept VALUES ('still here')`); err != nil {
		t.Fatal(err)
	}
	var mode int
	if err := old.QueryRow("PRAGMA auto_vacuum").Scan(&mode); err != nil || mode != 0 {
		t.Fatalf("an old file has auto_vacuum %d (%v)", mode, err)
	}
	_ = old.Close()
	db := testutil.OpenBridgeDBAt(t, path)
	var v string
	if err := db.QueryRow("PRAGMA auto_vacuum").Scan(&mode); err != nil || mode != 2 {
		t.Errorf("auto_vacuum %d (%v) after open, want 2", mode, err)
	}
	if err := db.QueryRow("SELECT v FROM kept").Scan(&v); err != nil || v != "still here" {
		t.Errorf("row %q (%v)", v, err)
	}
}
