// Package webhook delivers the bridge's events to WEBHOOK_URL (DESIGN.md
// section 4) from a durable outbox in bridge.db: an event is a row inserted
// in the same transaction as the change it reports, and a worker posts the
// due rows, signed per Standard Webhooks, until a 2xx answer or until the
// row's retry window ends and it becomes a dead letter.
package webhook

import (
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// The event types.
const (
	TypeMessageStatus = "message.status"
	TypeMessageUpsert = "message.upsert"
	TypeSessionStatus = "session.status"
)

// sessionKey orders every session.status event after the previous one.
const sessionKey = "session"

// Event is one event to deliver.
type Event struct {
	Type string
	// Key orders delivery: events with equal keys are delivered one at a
	// time, in the order they were enqueued.
	Key string
	// Rank, when above zero, drops the event at enqueue if an event of the
	// same Key with an equal or higher rank exists (a late status).
	Rank    int
	Payload any // marshalled to JSON as the request body
}

type messageStatusPayload struct {
	Event      string `json:"event"`
	WhatsAppID string `json:"whatsapp_id"`
	Status     string `json:"status"`
	Recipient  string `json:"recipient"`
	Timestamp  string `json:"timestamp"`
}

// MessageStatus is a message.status event: the message whatsappID sent to
// recipient reached status at t. Its rank is the status's, so that a late
// status (a Delivered after Read) is dropped at enqueue.
func MessageStatus(whatsappID string, recipient bridge.Recipient, status bridge.Status, t time.Time) Event {
	return Event{
		Type: TypeMessageStatus, Key: "msg:" + whatsappID, Rank: max(status.Rank(), 0),
		Payload: messageStatusPayload{
			Event: TypeMessageStatus, WhatsAppID: whatsappID, Status: string(status),
			Recipient: recipient.String(), Timestamp: bridge.FormatTime(t),
		},
	}
}

type sessionStatusPayload struct {
	Event     string `json:"event"`
	State     string `json:"state"`
	Reason    string `json:"reason"`
	Timestamp string `json:"timestamp"`
}

// SessionStatus is a session.status event: the session entered st's state
// for st's reason at t.
func SessionStatus(st bridge.SessionStatus, t time.Time) Event {
	return Event{
		Type: TypeSessionStatus, Key: sessionKey,
		Payload: sessionStatusPayload{
			Event: TypeSessionStatus, State: string(st.State), Reason: string(st.Reason), Timestamp: bridge.FormatTime(t),
		},
	}
}

type mediaPayload struct {
	MimeType string `json:"mimetype"`
	Size     uint64 `json:"size"`
	FileName string `json:"file_name"`
}

type upsertPayload struct {
	Event      string        `json:"event"`
	WhatsAppID string        `json:"whatsapp_id"`
	From       string        `json:"from"`
	Chat       string        `json:"chat"`
	PushName   string        `json:"push_name"`
	Type       string        `json:"type"`
	Text       string        `json:"text"`
	Timestamp  string        `json:"timestamp"`
	Media      *mediaPayload `json:"media,omitempty"`
}

// MessageUpsert is a message.upsert event. Messages of one chat keep their
// order.
func MessageUpsert(in bridge.Incoming) Event {
	chat := in.Chat.String()
	p := upsertPayload{
		Event: TypeMessageUpsert, WhatsAppID: in.WhatsAppID, From: in.From.String(), Chat: chat, PushName: in.PushName,
		Type: in.Type, Text: in.Text, Timestamp: bridge.FormatTime(in.Timestamp),
	}
	if m := in.Media; m != nil {
		p.Media = &mediaPayload{MimeType: m.MimeType, Size: m.Size, FileName: m.FileName}
	}
	return Event{Type: TypeMessageUpsert, Key: "chat:" + chat, Payload: p}
}
