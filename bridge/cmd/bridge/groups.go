package main

import (
	"context"
	"database/sql"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
)

// groupEvents puts what WhatsApp reports of the account's groups into the
// webhook outbox (group.participants, group.update), before the
// notification is acked.
type groupEvents struct {
	webhooks *webhook.Outbox
	writer   *sqlite.Batcher // bridge.db's one writer: a change's events in one transaction
}

var _ whatsapp.GroupEvents = groupEvents{}

func (e groupEvents) GroupChanged(ctx context.Context, c bridge.GroupChange) error {
	evs := webhook.GroupEvents(c)
	if len(evs) == 0 || !e.webhooks.Enabled() {
		return nil
	}
	return e.writer.Do(ctx, func(tx *sql.Tx) error {
		for _, ev := range evs {
			if err := e.webhooks.Enqueue(ctx, tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
}
