package durable_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/durable"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// worker is a minimal user of the engine over a real table: a job is due
// while done = 0, and its outcome is written after its attempt, as the send
// queue, the webhook outbox and the media downloader do.
type worker struct {
	db       *sql.DB
	batcher  *sqlite.Batcher
	claims   durable.Claims[int64]
	attempts chan int64
	// attempt runs one job; it blocks for as long as the test wants.
	attempt func(ctx context.Context, id int64)
}

func (w *worker) pass(ctx context.Context) durable.Pass {
	var ids []int64
	rows, err := w.db.QueryContext(ctx, `SELECT id FROM rows WHERE age = 0`)
	if err != nil {
		return durable.Pass{}
	}
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	_ = rows.Close()
	for _, id := range ids {
		if !w.claims.TryClaim(id) {
			continue
		}
		w.attempts <- id
		w.attempt(ctx, id)
		if ctx.Err() == nil {
			_ = w.batcher.Do(ctx, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, `UPDATE rows SET age = 1 WHERE id = ?`, id)
				return err
			})
		}
		w.claims.Release(id)
	}
	return durable.Pass{}
}

func (w *worker) run(ctx context.Context) {
	durable.Loop{
		Pass:    w.pass,
		NextDue: func(context.Context) (time.Time, bool) { return time.Time{}, false },
		Wake:    durable.NewSignal(), MaxIdle: time.Hour, Clock: newManualClock(),
	}.Run(ctx)
}

// Crash recovery: a worker killed during an attempt (its context ends and
// the process with its claims is gone) leaves the row due on disk; the
// next worker on the same database attempts it, with no lease to wait out.
func TestAKilledAttemptIsRetriedByTheNextStart(t *testing.T) {
	db, b := rowsTable(t, 0)
	if _, err := db.ExecContext(context.Background(), `INSERT INTO rows (id, age) VALUES (1, 0)`); err != nil {
		t.Fatal(err)
	}
	first := &worker{db: db, batcher: b, attempts: make(chan int64, 1),
		attempt: func(ctx context.Context, _ int64) { <-ctx.Done() }}
	ctx, kill := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); first.run(ctx) }()
	testutil.Receive(t, wait, first.attempts, func(id int64) bool { return id == 1 }, "the first attempt")
	kill()
	<-stopped

	second := &worker{db: db, batcher: b, attempts: make(chan int64, 1), attempt: func(context.Context, int64) {}}
	ctx2, stop := context.WithCancel(context.Background())
	defer stop()
	go second.run(ctx2)
	testutil.Receive(t, wait, second.attempts, func(id int64) bool { return id == 1 }, "the attempt after the restart")
	testutil.Eventually(t, wait, func() bool {
		var age int
		return db.QueryRowContext(context.Background(), `SELECT age FROM rows WHERE id = 1`).Scan(&age) == nil && age == 1
	}, "the outcome recorded")
}
