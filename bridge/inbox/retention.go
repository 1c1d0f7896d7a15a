package inbox

import (
	"context"
	"time"

	"github.com/msgbridge/msgbridge/bridge/durable"
)

// sweepChunk bounds the rows one sweep transaction deletes, so that the
// write lock is short.
const sweepChunk = 5000

const sweepOld = `DELETE FROM inbox WHERE id IN (SELECT id FROM inbox WHERE received_at < ? ORDER BY id LIMIT ?)`

// Sweep deletes the entries received longer than the retention ago; it
// returns how many.
func (b *Inbox) Sweep(ctx context.Context) (int64, error) {
	cutoff := b.opts.Now().Add(-b.opts.Retention).UnixMilli()
	return durable.DeleteChunked(ctx, b.opts.Batcher, sweepChunk, sweepOld, cutoff)
}

// sweepEvery is how often Run sweeps: a tenth of the retention, so that an
// entry outlives it by at most that much, between a second and an hour.
func sweepEvery(retention time.Duration) time.Duration {
	return min(max(retention/10, time.Second), time.Hour)
}

// Run sweeps at start and then periodically until ctx ends.
func (b *Inbox) Run(ctx context.Context) error {
	durable.Every(ctx, durable.ClockOf(b.opts.Now), sweepEvery(b.opts.Retention), func(ctx context.Context) {
		n, err := b.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			b.opts.Log.Error(err, "sweep the incoming history")
		case n > 0:
			b.opts.Log.V(1).Info("incoming history swept", "deleted", n)
		}
	})
	return nil
}
