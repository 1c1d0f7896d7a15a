package sendqueue

import (
	"context"
	"time"

	"github.com/msgbridge/msgbridge/bridge/durable"
)

// sweepChunk bounds the rows one sweep transaction deletes, so that the
// write lock is short.
const sweepChunk = 5000

// sweepFinished deletes finished messages (no longer Queued, no attempt
// due) last changed before ?; a Queued message, or one awaiting approval
// (which has no attempt due either), is never swept, however old.
const sweepFinished = `DELETE FROM messages WHERE rowid IN (SELECT rowid FROM messages
	WHERE status NOT IN ('Queued', 'AwaitingApproval') AND next_attempt_at IS NULL AND updated_at < ? LIMIT ?)`

// SweepFinished deletes the finished messages whose last change is older
// than retention (MESSAGE_RETENTION) and gives their space back; it returns
// how many.
func (l *MessageLog) SweepFinished(ctx context.Context, retention time.Duration) (int64, error) {
	return durable.DeleteChunked(ctx, l.batcher, sweepChunk, sweepFinished, l.now().Add(-retention).UnixMilli())
}

// RunRetention sweeps finished messages at start and then every tenth of
// retention until ctx ends.
func (l *MessageLog) RunRetention(ctx context.Context, retention time.Duration) error {
	durable.Sweeps(ctx, durable.ClockOf(l.now), retention, l.logger, "finished messages", func(ctx context.Context) (int64, error) {
		return l.SweepFinished(ctx, retention)
	})
	return nil
}
