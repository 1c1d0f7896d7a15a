package main

import (
	"context"
	"database/sql"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
)

// blockEvents puts the contacts the account blocks and unblocks (through
// the API or on its phone) into the webhook outbox: contact.blocked.
type blockEvents struct {
	webhooks bridge.Outbox
	writer   *sqlite.Batcher
}

var _ whatsapp.BlockEvents = blockEvents{}

func (e blockEvents) BlockChanged(ctx context.Context, c bridge.BlockChange) error {
	// Logged whatever the subscriptions: GET /api/events and the
	// dashboard read the event log.
	return e.writer.Do(ctx, func(tx *sql.Tx) error { return e.webhooks.BlockChanged(ctx, tx, c) })
}
