package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// A connection left unused for idleConnLifetime is closed, so an idle
// bridge does not keep a second SQLite engine for nothing; the next query
// opens one again, with the key.
func TestIdleConnectionsAreClosed(t *testing.T) {
	defer sqlite.SetIdleConnLifetime(50 * time.Millisecond)()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "idle.db"), testutil.TestKey(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	first, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = first.Close()
	_ = second.Close()
	if idle := db.Stats().Idle; idle != 2 {
		t.Fatalf("%d idle connections after returning two", idle)
	}
	// database/sql's cleaner looks once a second at the most.
	testutil.Eventually(t, 5*time.Second, func() bool { return db.Stats().OpenConnections == 0 },
		"idle connections still open")
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		t.Fatalf("query after the idle connections closed: %v", err)
	}
}

// Connections used at once by concurrent requests stay in the pool until
// idleConnLifetime: with database/sql's default of two idle, every read
// beyond two opened a connection (key, pragmas, a parse of the schema) and
// closed it right after (issue 47).
func TestConcurrentReadsKeepTheirConnections(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "busy.db"), testutil.TestKey(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	const concurrent = 16
	conns := make([]interface{ Close() error }, concurrent)
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		_ = c.Close()
	}
	if s := db.Stats(); s.MaxIdleClosed != 0 || s.Idle != concurrent {
		t.Fatalf("after %d concurrent uses: %d idle, %d closed at once", concurrent, s.Idle, s.MaxIdleClosed)
	}
}
