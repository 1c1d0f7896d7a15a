package webhook

import (
	"context"
	"database/sql"

	"github.com/msgbridge/msgbridge/bridge"
)

// TypeContactBlocked: the account blocked or unblocked a contact.
const TypeContactBlocked = "contact.blocked"

type blockPayload struct {
	Event        string  `json:"event"`
	Contact      string  `json:"contact"`
	ContactLID   *string `json:"contact_lid"`
	ContactPhone *string `json:"contact_phone"`
	Blocked      bool    `json:"blocked"`
	By           string  `json:"by"`
	Timestamp    string  `json:"timestamp"`
}

// ContactBlocked is the contact.blocked event: blocked true when the
// account blocked the contact, false when it unblocked it; by says where
// (api or phone). It keeps the order of the contact's chat.
func ContactBlocked(c bridge.BlockChange) Event {
	return Event{Type: TypeContactBlocked, Key: "chat:" + c.Contact.String(), Payload: blockPayload{
		Event: TypeContactBlocked, Contact: c.Contact.String(), ContactLID: optionalRecipient(c.ContactLID),
		ContactPhone: optionalRecipient(c.ContactPhone), Blocked: c.Blocked, By: c.By,
		Timestamp: bridge.FormatTime(c.At)}}
}

// BlockChanged enqueues c's contact.blocked event.
func (o *Outbox) BlockChanged(ctx context.Context, tx *sql.Tx, c bridge.BlockChange) error {
	return o.Enqueue(ctx, tx, ContactBlocked(c))
}
