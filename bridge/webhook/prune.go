package webhook

import (
	"context"
	"database/sql"
	"time"
)

// Delivered rows are kept a while (an operator can look a delivery up, and
// a late status of the message still finds its successor's rank), then
// deleted so that the table holds the backlog, not the history.
const (
	keepDelivered = 7 * 24 * time.Hour
	pruneEvery    = time.Hour
	pruneChunk    = 5000 // rows per transaction, so the write lock is short
)

const pruneDelivered = `DELETE FROM webhook_outbox WHERE id IN (
	SELECT id FROM webhook_outbox WHERE status = 'delivered' AND delivered_at < ? LIMIT ?)`

// prune deletes delivered rows older than keepDelivered; it returns how
// many.
func (o *Outbox) prune(ctx context.Context) (int64, error) {
	cutoff := o.opts.Now().Add(-keepDelivered).UnixMilli()
	var total int64
	for {
		var n int64
		err := o.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, pruneDelivered, cutoff, pruneChunk)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		total += n
		if err != nil || n < pruneChunk {
			return total, err
		}
	}
}

// pruneLoop prunes at start and every pruneEvery until ctx ends.
func (o *Outbox) pruneLoop(ctx context.Context) {
	for {
		if _, err := o.prune(ctx); err != nil && ctx.Err() == nil {
			o.opts.Log.Error(err, "prune delivered webhook events")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pruneEvery):
		}
	}
}
