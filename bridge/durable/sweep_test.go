package durable_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/durable"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// rowsTable is a real bridge.db with a table of n rows (id, age).
func rowsTable(t *testing.T, n int) (*sql.DB, *sqlite.Batcher) {
	t.Helper()
	db := testutil.OpenBridgeDB(t)
	b := sqlite.NewBatcher(db)
	t.Cleanup(b.Close)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE rows (id INTEGER PRIMARY KEY, age INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := db.ExecContext(ctx, `INSERT INTO rows (age) VALUES (?)`, i); err != nil {
			t.Fatal(err)
		}
	}
	return db, b
}

func count(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM rows`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A sweep deletes every matching row, a chunk per transaction, however
// many chunks that takes, and nothing else.
func TestDeleteChunkedDeletesEveryMatch(t *testing.T) {
	db, b := rowsTable(t, 25)
	n, err := durable.DeleteChunked(context.Background(), b, 10,
		`DELETE FROM rows WHERE id IN (SELECT id FROM rows WHERE age < ? LIMIT ?)`, 20)
	if err != nil || n != 20 || count(t, db) != 5 {
		t.Fatalf("deleted %d (err %v), %d left; want 20 deleted, 5 left", n, err, count(t, db))
	}
}

func TestChunkedStopsAtAShortChunk(t *testing.T) {
	var steps []int
	left := 23
	total, err := durable.Chunked(context.Background(), 10, func(_ context.Context, limit int) (int, error) {
		n := min(limit, left)
		left -= n
		steps = append(steps, n)
		return n, nil
	})
	if err != nil || total != 23 || len(steps) != 3 {
		t.Fatalf("total %d, steps %v, err %v; want 23 in steps of 10, 10, 3", total, steps, err)
	}
}
