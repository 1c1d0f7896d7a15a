package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// Open commits with an fsync each (synchronous=FULL); OpenSyncedByCaller
// without (NORMAL), its caller syncing the write-ahead log with SyncWAL,
// which finds the log SQLite writes and accepts a database without one.
func TestSyncedByCallerCommitsWithoutFsyncUntilSyncWAL(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for name, want := range map[string]int{"full.db": 2, "normal.db": 1} {
		path := filepath.Join(dir, name)
		open := sqlite.Open
		if want == 1 {
			open = sqlite.OpenSyncedByCaller
		}
		if err := sqlite.SyncWAL(path); err != nil {
			t.Fatalf("%s before it exists: %v", name, err)
		}
		db, err := open(ctx, path, testutil.TestKey(), "test")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		var got int
		if err := db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: synchronous %d, want %d", name, got, want)
		}
		if _, err := db.ExecContext(ctx, "CREATE TABLE t (x); INSERT INTO t VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path + "-wal"); err != nil {
			t.Fatalf("%s: no write-ahead log beside it: %v", name, err)
		}
		if err := sqlite.SyncWAL(path); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
