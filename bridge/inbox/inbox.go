// Package inbox keeps the incoming history: every message, reaction, edit
// and revoke the account received, stored in bridge.db in the transaction
// that enqueues its webhook event, with that event's webhook-id and body.
// It lists the history newest first (GET /api/messages?direction=in),
// replays it into the webhook outbox under the original webhook-ids (POST
// /api/admin/webhooks/replay), and deletes what is older than the
// retention (INBOX_RETENTION).
//
// The inbox, not the outbox, is what a replay reads: the outbox prunes
// delivered events after a week, the inbox keeps them for the retention.
package inbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// Outbox is where the inbox's events go (*webhook.Outbox).
type Outbox interface {
	// Enabled reports whether any subscription takes events.
	Enabled() bool
	// Subscribed reports whether subscription id exists and is enabled.
	Subscribed(id string) (exists, enabled bool)
	// Enqueue stores ev in tx for delivery.
	Enqueue(ctx context.Context, tx *sql.Tx, ev webhook.Event) error
	// Requeue stores ev again under its id, for subscription (empty: every
	// enabled one that takes it), unless it is still pending, and reports
	// whether it did.
	Requeue(ctx context.Context, tx *sql.Tx, ev webhook.Event, subscription string) (bool, error)
}

// Options configures an Inbox.
type Options struct {
	DB *sql.DB
	// Batcher is DB's one writer: replays and retention sweeps write
	// through it.
	Batcher  *sqlite.Batcher
	Webhooks Outbox
	// Retention is how long an entry is kept after it was received; the
	// sweep (Run) deletes older ones.
	Retention time.Duration
	Now       func() time.Time
	Log       logr.Logger
	// Identities is kept in step with the pairs the inbox learns; nil
	// keeps none.
	Identities *IdentityBook
}

// Inbox is the incoming history.
type Inbox struct {
	opts  Options
	stmts *sqlite.Statements
}

// New returns the inbox on opts.DB; Run must run for the retention to be
// applied.
func New(opts Options) *Inbox {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Inbox{opts: opts, stmts: sqlite.NewStatements(opts.DB)}
}

const insertEntry = `INSERT INTO inbox (webhook_id, event, ordering_key, whatsapp_id, chat, sender, sender_lid,
	sender_phone, push_name, type, body, sent_at, received_at, payload)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chat, whatsapp_id) DO NOTHING`

// Store records in, received now, and enqueues its webhook event, both in
// tx: the entry exists exactly when the event does. A message already
// stored (WhatsApp delivers it again when our ack was lost) is neither
// stored nor announced again, and Store succeeds, so it is acked this
// time. An error means nothing of in was stored.
func (b *Inbox) Store(ctx context.Context, tx *sql.Tx, in bridge.Incoming) error {
	ev := webhook.MessageUpsert(in)
	ev.ID = webhook.NewID()
	body, err := json.Marshal(ev.Payload)
	if err != nil {
		return fmt.Errorf("inbox: %w", err)
	}
	res, err := b.stmts.Exec(ctx, tx, insertEntry, ev.ID, ev.Type, ev.Key, in.WhatsAppID, in.Chat.String(),
		in.From.String(), optional(in.FromLID), optional(in.FromPhone), in.PushName, in.Type, in.Text,
		in.Timestamp.UnixMilli(), b.opts.Now().UnixMilli(), body)
	if err != nil {
		return fmt.Errorf("inbox: store %s: %w", in.WhatsAppID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err // n == 0: stored before
	}
	if in.Type == bridge.IncomingPollVote {
		if err := b.storeVote(ctx, tx, in); err != nil {
			return err
		}
	}
	if err := b.learnIdentity(ctx, tx, in); err != nil {
		return err
	}
	ev.Payload = json.RawMessage(body) // marshalled once, delivered as stored
	return b.opts.Webhooks.Enqueue(ctx, tx, ev)
}

// optional is r as the webhooks show it, "" when unknown.
func optional(r bridge.Recipient) string {
	if r.IsZero() {
		return ""
	}
	return r.String()
}
