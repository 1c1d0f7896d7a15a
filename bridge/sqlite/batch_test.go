package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

func TestBatcherCommitsEachCallerAndIsolatesFailures(t *testing.T) {
	db := openMigrated(t, filepath.Join(t.TempDir(), "b.db"), testKey)
	b := NewBatcher(db)
	defer b.Close()
	errBoom := errors.New("boom")

	const callers = 200
	var wg sync.WaitGroup
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			errs[i] = b.Do(context.Background(), func(tx *sql.Tx) error {
				if _, err := tx.Exec(`INSERT INTO notes (id, body) VALUES (?, 'x')`, i); err != nil {
					return err
				}
				if i%10 == 0 {
					return errBoom // its insert must be undone, nobody else's
				}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (i%10 == 0) != errors.Is(err, errBoom) || (i%10 != 0 && err != nil) {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM notes`).Scan(&n); err != nil || n != callers-callers/10 {
		t.Fatalf("rows %d, %v; want %d", n, err, callers-callers/10)
	}
}

func TestBatcherAfterClose(t *testing.T) {
	db := openMigrated(t, filepath.Join(t.TempDir(), "c.db"), testKey)
	b := NewBatcher(db)
	b.Close()
	b.Close() // idempotent
	if err := b.Do(context.Background(), func(*sql.Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Do after Close: %v", err)
	}
}

// BenchmarkBatcher: durable single-row inserts from 64 goroutines through
// the group-commit writer, against one transaction (one fsync) per insert;
// and from one caller through the writer (a transaction of one each).
//
//	go test -run=NONE -bench=Batcher ./bridge/sqlite
func BenchmarkBatcher(b *testing.B) {
	b.Run("one-caller", benchmarkOneCaller)
	for _, mode := range []string{"group-commit", "tx-per-write"} {
		b.Run(mode, func(b *testing.B) {
			db, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), testKey, "test")
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if err := Migrate(context.Background(), db, testSchema); err != nil {
				b.Fatal(err)
			}
			batcher := NewBatcher(db)
			defer batcher.Close()
			insert := func(tx *sql.Tx) error {
				_, err := tx.Exec(`INSERT INTO notes (body) VALUES ('x')`)
				return err
			}
			b.SetParallelism(32) // 64 goroutines on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					var err error
					if mode == "group-commit" {
						err = batcher.Do(context.Background(), insert)
					} else {
						var tx *sql.Tx
						if tx, err = db.Begin(); err == nil {
							if err = insert(tx); err == nil {
								err = tx.Commit()
							} else {
								_ = tx.Rollback()
							}
						}
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// benchmarkOneCaller: one caller's inserts through the writer, each alone in
// its transaction, as a bridge that is not busy writes.
func benchmarkOneCaller(b *testing.B) {
	db := openMigrated(b, filepath.Join(b.TempDir(), "bench.db"), testKey)
	batcher := NewBatcher(db)
	defer batcher.Close()
	for b.Loop() {
		if err := batcher.Do(context.Background(), func(tx *sql.Tx) error {
			_, err := tx.Exec(`INSERT INTO notes (body) VALUES ('x')`)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// AfterCommit runs once per committed transaction, before its callers hear
// of the commit.
func TestBatcherAfterCommit(t *testing.T) {
	db := openMigrated(t, filepath.Join(t.TempDir(), "b.db"), testKey)
	var commits atomic.Int32
	b := NewBatcher(db, AfterCommit(func() { commits.Add(1) }))
	defer b.Close()
	ctx := context.Background()
	if err := b.Do(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`CREATE TABLE t (v INTEGER)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := commits.Load(); got != 1 {
		t.Fatalf("after one commit: %d calls", got)
	}
	failing := errors.New("refused")
	if err := b.Do(ctx, func(*sql.Tx) error { return failing }); !errors.Is(err, failing) {
		t.Fatal(err)
	}
	if got := commits.Load(); got != 2 {
		t.Errorf("a transaction whose only write failed still commits (empty): %d calls", got)
	}
}
