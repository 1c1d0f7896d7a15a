package main

import (
	"context"
	"database/sql"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
)

// labelEvents keeps the account's labels (the LabelBook in bridge.db) and
// puts each change that is news into the webhook outbox (label.changed,
// label.chat, label.message), in one transaction: a CRM mirroring the
// labels from the events sees what the book holds.
type labelEvents struct {
	app      *app // its label book, made with the session
	webhooks *webhook.Outbox
	writer   *sqlite.Batcher
}

var _ whatsapp.LabelEvents = labelEvents{}

func (e labelEvents) LabelChanged(ctx context.Context, c bridge.LabelChange) error {
	return e.writer.Do(ctx, func(tx *sql.Tx) error {
		news, err := e.app.labels.Apply(ctx, tx, c)
		if err != nil || !news || !e.webhooks.Enabled() {
			return err
		}
		return e.webhooks.Enqueue(ctx, tx, webhook.LabelEvent(c))
	})
}
