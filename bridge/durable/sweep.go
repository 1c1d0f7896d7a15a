package durable

import (
	"context"
	"database/sql"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// Chunked repeats step, which handles at most chunk rows and reports how
// many, until a step handles fewer or fails; it returns the total. Each
// step is its own transaction, so the writer's lock is never held long.
func Chunked(ctx context.Context, chunk int, step func(ctx context.Context, limit int) (int, error)) (int64, error) {
	var total int64
	for {
		n, err := step(ctx, chunk)
		total += int64(n)
		if err != nil || n < chunk {
			return total, err
		}
	}
}

// DeleteChunked runs query, a DELETE whose last parameter is the number of
// rows it may delete, with args and then chunk, on batcher until it deletes
// fewer than chunk rows; then, when it deleted anything, it gives the freed
// pages back to the file system (sqlite.IncrementalVacuum), so that a
// retention shrinks bridge.db instead of leaving it at its largest. It
// returns how many rows it deleted.
func DeleteChunked(ctx context.Context, batcher *sqlite.Batcher, chunk int, query string, args ...any) (int64, error) {
	total, err := deleteChunks(ctx, batcher, chunk, query, args...)
	if err != nil || total == 0 {
		return total, err
	}
	return total, batcher.Do(ctx, func(tx *sql.Tx) error { return sqlite.IncrementalVacuum(ctx, tx) })
}

func deleteChunks(ctx context.Context, batcher *sqlite.Batcher, chunk int, query string, args ...any) (int64, error) {
	args = append(args[:len(args):len(args)], chunk)
	return Chunked(ctx, chunk, func(ctx context.Context, _ int) (int, error) {
		var n int64
		err := batcher.Do(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, query, args...)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		return int(n), err
	})
}

// SweepEvery is how often a retention of d is swept: a tenth of it, so that
// a row outlives it by at most that much, between a second and an hour.
func SweepEvery(d time.Duration) time.Duration {
	return min(max(d/10, time.Second), time.Hour)
}

// Sweeps runs sweep at once and then every SweepEvery(retention) until ctx
// ends, logging what it deleted (as what) and its errors: the retention
// sweeps of the incoming history and of finished messages.
func Sweeps(ctx context.Context, clock Clock, retention time.Duration, log logr.Logger, what string, sweep func(context.Context) (int64, error)) {
	Every(ctx, clock, SweepEvery(retention), func(ctx context.Context) {
		n, err := sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error(err, "sweep "+what)
		case n > 0:
			log.V(1).Info(what+" swept", "deleted", n)
		}
	})
}
