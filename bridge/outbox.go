package bridge

import (
	"context"
	"database/sql"
)

// Outbox is the webhook outbox, the one port through which the parts that
// change something report it to the subscribers: the message log (statuses),
// the session (its state, group changes) and the inbox (what was received).
// Each method stores its event in tx, the transaction that stores the
// change, so that both commit or neither does. *webhook.Outbox implements
// it; how an event is encoded is its own business.
type Outbox interface {
	// Enabled reports whether any subscription takes events: without one,
	// work that only makes events can be skipped.
	Enabled() bool
	// MessageStatus reports m's current status (message.status).
	MessageStatus(ctx context.Context, tx *sql.Tx, m Message) error
	// SessionStatus reports a new state of the link (session.status).
	SessionStatus(ctx context.Context, tx *sql.Tx, s SessionStatus) error
	// GroupChanged reports what WhatsApp said of one of the account's
	// groups (group.participants, group.update).
	GroupChanged(ctx context.Context, tx *sql.Tx, c GroupChange) error
	// Call reports a call offered or ended (call.offer, call.ended).
	Call(ctx context.Context, tx *sql.Tx, c Call) error
	// BlockChanged reports a contact blocked or unblocked (contact.blocked).
	BlockChanged(ctx context.Context, tx *sql.Tx, c BlockChange) error
}
