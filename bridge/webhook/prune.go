package webhook

import (
	"context"
	"time"

	"github.com/msgbridge/msgbridge/bridge/durable"
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
	return durable.DeleteChunked(ctx, o.opts.Batcher, pruneChunk, pruneDelivered, cutoff)
}

// pruneLoop prunes at start and every pruneEvery until ctx ends.
func (o *Outbox) pruneLoop(ctx context.Context) {
	durable.Every(ctx, durable.ClockOf(o.opts.Now), pruneEvery, func(ctx context.Context) {
		if _, err := o.prune(ctx); err != nil && ctx.Err() == nil {
			o.opts.Log.Error(err, "prune delivered webhook events")
		}
		if _, err := o.pruneLog(ctx); err != nil && ctx.Err() == nil {
			o.opts.Log.Error(err, "prune the event log")
		}
	})
}
