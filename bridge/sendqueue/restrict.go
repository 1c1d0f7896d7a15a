package sendqueue

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// WhatsApp's restriction answers (rate-overlimit, the reach-out time lock)
// hold the whole queue until the restriction ends. The refused message did
// nothing wrong: it keeps its attempts and retries and is due again when
// the hold ends, so a restriction never turns a queue into Failed messages.

// RestrictionSource is a Sender that also knows of restrictions WhatsApp
// announced without refusing a send (the reach-out notification). The
// queue holds its attempts until RestrictedUntil when it is later than now.
type RestrictionSource interface {
	RestrictedUntil() time.Time
}

// hold is the end of the latest restriction a send ran into.
type hold struct {
	mu    sync.Mutex
	until time.Time
}

func (h *hold) extend(until time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if until.After(h.until) {
		h.until = until
	}
}

func (h *hold) end() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.until
}

// heldUntil is when the queue may attempt again; zero when the queue is
// not held at now. A session that knows restrictions (a RestrictionSource)
// is the one judge: it records every refusal too, and it alone hears when
// WhatsApp lifts a lock early, which a copy kept here would outlive. For
// other senders, the end of the restrictions the queue ran into.
func (q *Queue) heldUntil(now time.Time) time.Time {
	until := q.hold.end()
	if src, ok := q.opts.Sender.(RestrictionSource); ok {
		until = src.RestrictedUntil()
	}
	if !until.After(now) {
		return time.Time{}
	}
	return until
}

const holdRestrictedMessage = `UPDATE messages SET last_error = ?, next_attempt_at = ?, updated_at = ?
	WHERE id = ? AND status = 'Queued'`

// holdRestricted records an attempt of m that WhatsApp refused for a
// restriction ending at until: the queue holds until then, and m stays
// Queued with its attempts and retries, due when the hold ends.
func (q *Queue) holdRestricted(ctx context.Context, m *row, until time.Time, sendErr error) {
	q.hold.extend(until)
	now := q.now()
	bg := context.WithoutCancel(ctx)
	err := q.batcher.Do(bg, func(tx *sql.Tx) error {
		_, err := q.stmts.Exec(bg, tx, holdRestrictedMessage, sendErr.Error(), until.UnixMilli(), now.UnixMilli(), m.ID)
		return err
	})
	if err != nil {
		// Still due as stored: the next attempt meets the restriction again.
		q.logger.Error(err, "record restricted attempt", "message", m.ID)
		return
	}
	m.LastError, m.UpdatedAt = sendErr.Error(), now
	m.nextAttempt = sql.NullInt64{Int64: until.UnixMilli(), Valid: true}
	q.logger.Info("WhatsApp restricts sending; the queue waits", "until", bridge.FormatTime(until), "message", m.ID)
	q.wake.Notify()
}
