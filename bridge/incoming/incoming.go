// Package incoming is the use case of a message the account received: its
// attachment's media record, its entry of the incoming history and its
// webhook event are stored in one transaction, and only then does WhatsApp
// get its ack (the link acks when Incoming's channel yields nil). The link calls it
// through its Events port; the stores are ports here, so the use case is
// read, and tested, in one place instead of in the wiring.
package incoming

import (
	"context"
	"database/sql"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// Media records an incoming attachment in tx and gives in its media id
// (a redelivery keeps the first); *media.Store is one.
type Media interface {
	Register(ctx context.Context, tx *sql.Tx, in *bridge.Incoming) error
}

// History stores in as an entry of the incoming history with its webhook
// event, in tx; *inbox.Inbox is one.
type History interface {
	Store(ctx context.Context, tx *sql.Tx, in bridge.Incoming) error
}

// Receiver stores received messages.
type Receiver struct {
	Writer  *sqlite.Batcher // the one writer of bridge.db
	Media   Media
	History History
}

// Incoming stores in: its media record first, which gives the event its
// media id, then its history entry and event; all of it or, on an error,
// none, so that WhatsApp delivers it again. It returns once in is queued
// for the writer (in the order of the calls, several per transaction); the
// channel yields nil when in is committed, or the error.
func (r Receiver) Incoming(ctx context.Context, in bridge.Incoming) <-chan error {
	return r.Writer.Submit(ctx, func(tx *sql.Tx) error {
		if err := r.Media.Register(ctx, tx, &in); err != nil {
			return err
		}
		return r.History.Store(ctx, tx, in)
	})
}
