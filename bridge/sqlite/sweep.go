package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/go-logr/logr"
)

// sweepChunk bounds the rows one sweep transaction deletes, so that the
// write lock is short.
const sweepChunk = 5000

// Sweep runs the DELETE query, whose last parameter is the chunk size (a
// LIMIT), in chunks through the one writer until a chunk deletes fewer; then,
// when it deleted anything, it gives the freed pages back to the file system
// (IncrementalVacuum). It returns how many rows it deleted.
func Sweep(ctx context.Context, writer *Batcher, query string, args ...any) (int64, error) {
	args = append(args, sweepChunk)
	var total int64
	for {
		var n int64
		err := writer.Do(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, query, args...)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		total += n
		if err != nil {
			return total, err
		}
		if n < sweepChunk {
			break
		}
	}
	if total == 0 {
		return 0, nil
	}
	return total, writer.Do(ctx, func(tx *sql.Tx) error { return IncrementalVacuum(ctx, tx) })
}

// SweepEvery is how often a retention of d is swept: a tenth of it, so that
// a row outlives it by at most that much, between a second and an hour.
func SweepEvery(d time.Duration) time.Duration {
	return min(max(d/10, time.Second), time.Hour)
}

// RunSweeps calls sweep at once and then every SweepEvery(retention) until
// ctx ends, logging what it deleted (as what) and its errors.
func RunSweeps(ctx context.Context, retention time.Duration, log logr.Logger, what string, sweep func(context.Context) (int64, error)) error {
	every := SweepEvery(retention)
	for {
		n, err := sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error(err, "sweep "+what)
		case n > 0:
			log.V(1).Info(what+" swept", "deleted", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
	}
}
