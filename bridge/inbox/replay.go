package inbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// Replay errors: with no enabled subscription (WEBHOOK_URL empty and no
// other) a replay would deliver nothing; a subscription named must exist
// and be enabled.
var (
	ErrWebhooksOff = bridge.Errorf(bridge.KindConflict, bridge.CodeWebhooksOff,
		"webhooks are off (WEBHOOK_URL is empty and no subscription is enabled): there is nothing to replay to")
	ErrNoSubscription = bridge.Errorf(bridge.KindNotFound, bridge.CodeSubscriptionNotFound, "no such subscription")
	errDisabled       = bridge.Errorf(bridge.KindConflict, bridge.CodeWebhooksOff, "the subscription is disabled: enable it first")
)

// replayChunk is how many entries one replay transaction requeues, so that
// the write lock is short and memory holds one chunk.
const replayChunk = 500

// Replayed counts what a replay did.
type Replayed struct {
	// Enqueued events are pending delivery again.
	Enqueued int
	// AlreadyPending events were pending anyway; they are delivered once.
	AlreadyPending int
}

const replayScan = `SELECT id, webhook_id, event, ordering_key, payload FROM inbox
	WHERE received_at >= ? AND id > ? ORDER BY id LIMIT ?`

// Replay enqueues again every entry received at or after since, in the
// order they were received, each under its original webhook-id and with
// its original body. Entries whose event is still pending are not
// enqueued twice. Only incoming events are replayed: message.status and
// session.status report state that GET /api/messages/{id} and
// /api/admin/state show as it is now, and a week-old "connected" replayed
// would mislead. It replays to subscription only, or, when that is empty,
// to every enabled subscription whose filter takes the event.
func (b *Inbox) Replay(ctx context.Context, since time.Time, subscription string) (Replayed, error) {
	var done Replayed
	if err := b.replayable(subscription); err != nil {
		return done, err
	}
	after := int64(0)
	for {
		var n int
		err := b.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
			var err error
			n, after, err = b.replayChunk(ctx, tx, chunkAt{since, after, subscription}, &done)
			return err
		})
		if err != nil {
			return done, bridge.Internal(bridge.CodeReplayFailed, "the incoming history could not be replayed", err)
		}
		if n < replayChunk {
			return done, nil
		}
	}
}

func (b *Inbox) replayable(subscription string) error {
	if subscription == "" {
		if !b.opts.Webhooks.Enabled() {
			return ErrWebhooksOff
		}
		return nil
	}
	switch exists, enabled := b.opts.Webhooks.Subscribed(subscription); {
	case !exists:
		return ErrNoSubscription
	case !enabled:
		return errDisabled
	}
	return nil
}

// chunkAt is where a replay chunk starts: the entries received at or after
// since, after row id after, for subscription.
type chunkAt struct {
	since        time.Time
	after        int64
	subscription string
}

// replayChunk requeues the next chunk of entries after at; it returns how
// many it read and the last one's id.
func (b *Inbox) replayChunk(ctx context.Context, tx *sql.Tx, at chunkAt, done *Replayed) (int, int64, error) {
	after := at.after
	rows, err := tx.QueryContext(ctx, replayScan, at.since.UnixMilli(), after, replayChunk)
	if err != nil {
		return 0, after, err
	}
	var evs []webhook.Event
	for rows.Next() {
		var ev webhook.Event
		var payload []byte
		if err := rows.Scan(&after, &ev.ID, &ev.Type, &ev.Key, &payload); err != nil {
			_ = rows.Close()
			return 0, after, err
		}
		ev.Payload = json.RawMessage(payload) // delivered as stored
		evs = append(evs, ev)
	}
	if err := rows.Close(); err != nil {
		return 0, after, err
	}
	// A savepoint of the Batcher's transaction undoes the whole chunk on
	// an error, so the counts are added only once it succeeded.
	var chunk Replayed
	for _, ev := range evs {
		requeued, err := b.opts.Webhooks.Requeue(ctx, tx, ev, at.subscription)
		if err != nil {
			return 0, after, err
		}
		if requeued {
			chunk.Enqueued++
		} else {
			chunk.AlreadyPending++
		}
	}
	done.Enqueued += chunk.Enqueued
	done.AlreadyPending += chunk.AlreadyPending
	return len(evs), after, nil
}
