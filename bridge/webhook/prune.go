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
	// DefaultKeepDelivered is how long a delivered row is kept when
	// Options.KeepDelivered is zero (DELIVERED_RETENTION's default).
	DefaultKeepDelivered = 7 * 24 * time.Hour
	// maxPruneEvery is the longest pause between two sweeps; a short
	// retention is swept every tenth of it, at most every second.
	maxPruneEvery = time.Hour
	minPruneEvery = time.Second
	pruneChunk    = 5000 // rows per transaction, so the write lock is short
)

// pruneEvery is how often the sweeps run: a tenth of the shorter of the
// two retentions, from a second to an hour, so that a retention of a
// minute keeps the tables that small.
func (o *Outbox) pruneEvery() time.Duration {
	return min(maxPruneEvery, max(minPruneEvery, min(o.opts.KeepDelivered, o.opts.KeepEvents)/10))
}

const pruneDelivered = `DELETE FROM webhook_outbox WHERE id IN (
	SELECT id FROM webhook_outbox WHERE status = 'delivered' AND delivered_at < ? LIMIT ?)`

// prune deletes delivered rows older than Options.KeepDelivered; it
// returns how many.
func (o *Outbox) prune(ctx context.Context) (int64, error) {
	cutoff := o.opts.Now().Add(-o.opts.KeepDelivered).UnixMilli()
	return durable.DeleteChunked(ctx, o.opts.Batcher, pruneChunk, pruneDelivered, cutoff)
}

// pruneLoop prunes at start and every pruneEvery until ctx ends.
func (o *Outbox) pruneLoop(ctx context.Context) {
	durable.Every(ctx, durable.ClockOf(o.opts.Now), o.pruneEvery(), func(ctx context.Context) {
		if _, err := o.prune(ctx); err != nil && ctx.Err() == nil {
			o.opts.Log.Error(err, "prune delivered webhook events")
		}
		if _, err := o.pruneLog(ctx); err != nil && ctx.Err() == nil {
			o.opts.Log.Error(err, "prune the event log")
		}
	})
}
