package inbox

import (
	"context"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

const sweepOld = `DELETE FROM inbox WHERE id IN (SELECT id FROM inbox WHERE received_at < ? ORDER BY id LIMIT ?)`

// Sweep deletes the entries received longer than the retention ago and
// gives their space back; it returns how many.
func (b *Inbox) Sweep(ctx context.Context) (int64, error) {
	cutoff := b.opts.Now().Add(-b.opts.Retention).UnixMilli()
	return sqlite.Sweep(ctx, b.opts.Batcher, sweepOld, cutoff)
}

// Run sweeps at start and then every tenth of the retention until ctx ends.
func (b *Inbox) Run(ctx context.Context) error {
	return sqlite.RunSweeps(ctx, b.opts.Retention, b.opts.Log, "the incoming history", b.Sweep)
}
