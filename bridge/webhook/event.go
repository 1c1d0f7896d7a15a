// Package webhook delivers the bridge's events to WEBHOOK_URL (DESIGN.md
// section 4) from a durable outbox in bridge.db: an event is a row inserted
// in the same transaction as the change it reports, and a worker posts the
// due rows, signed per Standard Webhooks, until a 2xx answer or until the
// row's retry window ends and it becomes a dead letter.
package webhook

import (
	"strings"
	"time"
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

// timestampLayout is the API's timestamp format (millisecond UTC).
const timestampLayout = "2006-01-02T15:04:05.000Z"

func stamp(t time.Time) string { return t.UTC().Format(timestampLayout) }

// statusRank orders message statuses; Failed can only follow Queued, so it
// shares Sent's rank.
var statusRank = map[string]int{"Sent": 1, "Failed": 1, "Delivered": 2, "Read": 3}

type messageStatusPayload struct {
	Event      string `json:"event"`
	WhatsAppID string `json:"whatsapp_id"`
	Status     string `json:"status"`
	Recipient  string `json:"recipient"`
	Timestamp  string `json:"timestamp"`
}

// MessageStatus is a message.status event: the message whatsappID sent to
// recipient (a JID; a user's is reported as the phone number) reached
// status at t.
func MessageStatus(whatsappID, recipient, status string, t time.Time) Event {
	recipient = strings.TrimSuffix(recipient, "@s.whatsapp.net")
	return Event{
		Type: TypeMessageStatus, Key: "msg:" + whatsappID, Rank: statusRank[status],
		Payload: messageStatusPayload{Event: TypeMessageStatus, WhatsAppID: whatsappID, Status: status, Recipient: recipient, Timestamp: stamp(t)},
	}
}

type sessionStatusPayload struct {
	Event     string `json:"event"`
	State     string `json:"state"`
	Reason    string `json:"reason"`
	Timestamp string `json:"timestamp"`
}

// SessionStatus is a session.status event: the session entered state for
// reason at t.
func SessionStatus(state, reason string, t time.Time) Event {
	return Event{
		Type: TypeSessionStatus, Key: sessionKey,
		Payload: sessionStatusPayload{Event: TypeSessionStatus, State: state, Reason: reason, Timestamp: stamp(t)},
	}
}

// Media describes an incoming message's attachment.
type Media struct {
	MimeType string `json:"mimetype"`
	Size     uint64 `json:"size"`
	FileName string `json:"file_name"`
}

// Incoming is a received message as message.upsert reports it.
type Incoming struct {
	WhatsAppID string
	From       string // the sender's phone number (or its JID when unknown)
	Chat       string // the chat: a phone number, or a group JID
	PushName   string
	Type       string // text, image, document, video, audio, sticker, …
	Text       string // the body, or the caption
	Timestamp  time.Time
	Media      *Media
}

type upsertPayload struct {
	Event      string `json:"event"`
	WhatsAppID string `json:"whatsapp_id"`
	From       string `json:"from"`
	Chat       string `json:"chat"`
	PushName   string `json:"push_name"`
	Type       string `json:"type"`
	Text       string `json:"text"`
	Timestamp  string `json:"timestamp"`
	Media      *Media `json:"media,omitempty"`
}

// MessageUpsert is a message.upsert event. Messages of one chat keep their
// order.
func MessageUpsert(in Incoming) Event {
	return Event{
		Type: TypeMessageUpsert, Key: "chat:" + in.Chat,
		Payload: upsertPayload{
			Event: TypeMessageUpsert, WhatsAppID: in.WhatsAppID, From: in.From, Chat: in.Chat, PushName: in.PushName,
			Type: in.Type, Text: in.Text, Timestamp: stamp(in.Timestamp), Media: in.Media,
		},
	}
}
