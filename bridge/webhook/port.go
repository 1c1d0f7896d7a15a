package webhook

import (
	"context"
	"database/sql"

	"github.com/msgbridge/msgbridge/bridge"
)

// The outbox is the domain's one port for events (bridge.Outbox): each
// part hands it its change, the outbox encodes the event.
var _ bridge.Outbox = (*Outbox)(nil)

// MessageStatus enqueues the events of m's status change: message.status,
// and message.approval for an approval's steps (MessageEvents).
func (o *Outbox) MessageStatus(ctx context.Context, tx *sql.Tx, m bridge.Message) error {
	for _, ev := range MessageEvents(m) {
		if err := o.Enqueue(ctx, tx, ev); err != nil {
			return err
		}
	}
	return nil
}

// SessionStatus enqueues the session.status event of s, now.
func (o *Outbox) SessionStatus(ctx context.Context, tx *sql.Tx, s bridge.SessionStatus) error {
	return o.Enqueue(ctx, tx, SessionStatus(s, o.opts.Now()))
}

// GroupChanged enqueues c's group events (none for a change no event
// reports).
func (o *Outbox) GroupChanged(ctx context.Context, tx *sql.Tx, c bridge.GroupChange) error {
	for _, ev := range GroupEvents(c) {
		if err := o.Enqueue(ctx, tx, ev); err != nil {
			return err
		}
	}
	return nil
}

// Call enqueues c's call.offer or call.ended event.
func (o *Outbox) Call(ctx context.Context, tx *sql.Tx, c bridge.Call) error {
	return o.Enqueue(ctx, tx, CallEvent(c))
}
