package durable

import (
	"context"
	"database/sql"

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
// fewer than chunk rows; it returns how many it deleted.
func DeleteChunked(ctx context.Context, batcher *sqlite.Batcher, chunk int, query string, args ...any) (int64, error) {
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
