package httpapi

import (
	"errors"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// This file is the seam to the send queue's own types, kept in one place:
// the API works in bridge.Message and bridge.Recipient; these functions
// translate until the queue speaks them too.

// queueRequest is the queue's request for items to recipient.
func queueRequest(recipient bridge.Recipient, items []sendItem) sendqueue.Request {
	req := sendqueue.Request{Recipient: recipient.JID(), Items: make([]sendqueue.Item, len(items))}
	for i, it := range items {
		req.Items[i] = sendqueue.Item{Type: string(it.typ), Text: it.text, File: it.file}
	}
	return req
}

// fromQueue is a logged message in the domain's terms.
func fromQueue(m sendqueue.Message) bridge.Message {
	recipient, _ := bridge.RecipientFromJID(m.Recipient) // the queue stores what ParseRecipient accepted
	return bridge.Message{
		ID: m.ID, WhatsAppID: m.WhatsAppID, Recipient: recipient, Type: bridge.MessageType(m.Type),
		Status: bridge.Status(m.Status), RetryCount: m.RetryCount, Attempts: m.Attempts, LastError: m.LastError,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

// messagesError is an error of the message log as a *bridge.Error.
func messagesError(err error) error {
	if e, ok := errors.AsType[*bridge.Error](err); ok && e.Kind != bridge.KindInternal {
		return err
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sendqueue.ErrNotFound):
		return bridge.Errorf(bridge.KindNotFound, "not_found", "no message with this id")
	case errors.Is(err, sendqueue.ErrBadCursor):
		return bridge.Invalid("invalid_cursor", "%s", err.Error())
	}
	return bridge.Internal("read_failed", "the message log could not be read", err)
}
