package inbox

import (
	"context"

	"github.com/msgbridge/msgbridge/bridge/durable"
)

// sweepChunk bounds the rows one sweep transaction deletes, so that the
// write lock is short.
const sweepChunk = 5000

const sweepOld = `DELETE FROM inbox WHERE id IN (SELECT id FROM inbox WHERE received_at < ? ORDER BY id LIMIT ?)`

// sweepVotes deletes the votes whose latest vote is older than the
// retention: a vote is incoming history like the message.poll_vote entry
// that carried it, and goes with it (the voter's time, which WhatsApp
// stamps, stands for when it was received).
const sweepVotes = `DELETE FROM poll_votes WHERE rowid IN (SELECT rowid FROM poll_votes WHERE voted_at < ? LIMIT ?)`

// Sweep deletes the entries received longer than the retention ago, and
// the poll votes as old, and gives their space back; it returns how many
// entries and votes it deleted.
func (b *Inbox) Sweep(ctx context.Context) (int64, error) {
	cutoff := b.opts.Now().Add(-b.opts.Retention).UnixMilli()
	entries, err := durable.DeleteChunked(ctx, b.opts.Batcher, sweepChunk, sweepOld, cutoff)
	if err != nil {
		return entries, err
	}
	votes, err := durable.DeleteChunked(ctx, b.opts.Batcher, sweepChunk, sweepVotes, cutoff)
	return entries + votes, err
}

// Run sweeps at start and then every tenth of the retention until ctx ends.
func (b *Inbox) Run(ctx context.Context) error {
	durable.Sweeps(ctx, durable.ClockOf(b.opts.Now), b.opts.Retention, b.opts.Log, "the incoming history", b.Sweep)
	return nil
}
