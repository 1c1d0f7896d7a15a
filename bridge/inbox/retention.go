package inbox

import (
	"context"

	"github.com/msgbridge/msgbridge/bridge/durable"
)

// sweepChunk bounds the rows one sweep transaction deletes, so that the
// write lock is short.
const sweepChunk = 5000

const sweepOld = `DELETE FROM inbox WHERE id IN (SELECT id FROM inbox WHERE received_at < ? ORDER BY id LIMIT ?)`

// Sweep deletes the entries received longer than the retention ago and
// gives their space back; it returns how many.
func (b *Inbox) Sweep(ctx context.Context) (int64, error) {
	cutoff := b.opts.Now().Add(-b.opts.Retention).UnixMilli()
	return durable.DeleteChunked(ctx, b.opts.Batcher, sweepChunk, sweepOld, cutoff)
}

// Run sweeps at start and then every tenth of the retention until ctx ends.
func (b *Inbox) Run(ctx context.Context) error {
	durable.Sweeps(ctx, durable.ClockOf(b.opts.Now), b.opts.Retention, b.opts.Log, "the incoming history", b.Sweep)
	return nil
}
