// Package webhook delivers the bridge's events to WEBHOOK_URL
// from a durable outbox in bridge.db: an event is a row inserted
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
	// ID is the webhook-id; Enqueue gives the event a new one when empty.
	ID string
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
	// Reason says why a Failed message failed (bridge.Message.FailReason).
	Reason string `json:"reason,omitempty"`
}

// MessageStatus is a message.status event: the message whatsappID sent to
// recipient reached status at t. Its rank is the status's, so that a late
// status (a Delivered after Read) is dropped at enqueue. The recipient is
// its JID, as the message log shows it, so that the two compare equal.
func MessageStatus(whatsappID string, recipient bridge.Recipient, status bridge.Status, t time.Time) Event {
	return Event{
		Type: TypeMessageStatus, Key: "msg:" + whatsappID, Rank: max(status.Rank(), 0),
		Payload: messageStatusPayload{
			Event: TypeMessageStatus, WhatsAppID: whatsappID, Status: string(status),
			Recipient: recipient.JID(), Timestamp: bridge.FormatTime(t),
		},
	}
}

// MessageStatusOf is the message.status event of m's current status; a
// Failed one carries its reason (not_on_whatsapp, logged_out,
// edit_window_expired, retries_exhausted).
func MessageStatusOf(m bridge.Message) Event {
	e := MessageStatus(m.WhatsAppID, m.Recipient, m.Status, m.UpdatedAt)
	p := e.Payload.(messageStatusPayload) //nolint:forcetypeassert // MessageStatus's own payload
	p.Reason = m.FailReason()
	e.Payload = p
	return e
}

type sessionStatusPayload struct {
	Event     string `json:"event"`
	State     string `json:"state"`
	Reason    string `json:"reason"`
	Timestamp string `json:"timestamp"`
	// RestrictedUntil (issue 16): when WhatsApp's restriction of sending
	// ends; only while one lasts.
	RestrictedUntil string `json:"restricted_until,omitempty"`
}

// SessionStatus is a session.status event: the session entered st's state
// for st's reason at t.
func SessionStatus(st bridge.SessionStatus, t time.Time) Event {
	return Event{
		Type: TypeSessionStatus, Key: sessionKey,
		Payload: sessionStatusPayload{
			Event: TypeSessionStatus, State: string(st.State), Reason: string(st.Reason), Timestamp: bridge.FormatTime(t),
			RestrictedUntil: restrictedUntil(st),
		},
	}
}

type mediaPayload struct {
	MimeType string `json:"mimetype"`
	Size     uint64 `json:"size"`
	FileName string `json:"file_name"`
	// Added by issue 14, after the original fields.
	ID     string `json:"id,omitempty"`
	URL    string `json:"url,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	PTT    bool   `json:"ptt,omitempty"`
}

type locationPayload struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
}

type contactPayload struct {
	DisplayName string `json:"display_name"`
	VCard       string `json:"vcard"`
}

// upsertPayload keeps the original fields first and byte for byte; the
// fields of issue 14 follow them.
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

	FromLID   *string          `json:"from_lid"`
	FromPhone *string          `json:"from_phone"`
	Quoted    string           `json:"quoted,omitempty"`
	Mentions  []string         `json:"mentions,omitempty"`
	Location  *locationPayload `json:"location,omitempty"`
	Contacts  []contactPayload `json:"contacts,omitempty"`
	// ReplyID is the id of the button tapped or the list row picked
	// (type button_reply, list_reply).
	ReplyID   string       `json:"reply_id,omitempty"`
	Truncated []cutPayload `json:"truncated,omitempty"`
}

// cutPayload is a field the bridge cut to its bound, with its whole size.
type cutPayload struct {
	Field string `json:"field"`
	Size  int    `json:"size"`
}

// cutsOf are in's cuts as the events show them; nil when none.
func cutsOf(in bridge.Incoming) []cutPayload {
	var out []cutPayload
	for _, c := range in.Truncated {
		out = append(out, cutPayload(c))
	}
	return out
}

// mediaPayloadOf is m as the events show it; nil when there is none.
func mediaPayloadOf(m *bridge.Media) *mediaPayload {
	if m == nil {
		return nil
	}
	p := &mediaPayload{MimeType: m.MimeType, Size: m.Size, FileName: m.FileName, ID: m.ID, SHA256: m.SHA256, PTT: m.PTT}
	if m.ID != "" {
		p.URL = MediaURL(m.ID)
	}
	return p
}

// MediaURL is where GET /api/media/{id} serves an attachment, relative to
// the bridge.
func MediaURL(id string) string { return "/api/media/" + id }

// MessageUpsert is a message.upsert event, or for a reaction, edit or
// revoke (in.Type) a message.reaction, message.edit or message.revoke
// event, and for a vote on a poll a message.poll_vote event. The events of one chat keep their order.
func MessageUpsert(in bridge.Incoming) Event {
	if in.IsStatus() {
		return StatusUpdate(in)
	}
	chat := in.Chat.String()
	key := "chat:" + chat
	switch in.Type {
	case bridge.IncomingReaction, bridge.IncomingEdit, bridge.IncomingRevoke, bridge.IncomingPollVote:
		return Event{Type: "message." + in.Type, Key: key, Payload: changePayloadOf(in)}
	}
	p := upsertPayload{
		Event: TypeMessageUpsert, WhatsAppID: in.WhatsAppID, From: in.From.String(), Chat: chat, PushName: in.PushName,
		Type: in.Type, Text: in.Text, Timestamp: bridge.FormatTime(in.Timestamp),
		FromLID: optionalRecipient(in.FromLID), FromPhone: optionalRecipient(in.FromPhone), Quoted: in.Quoted,
		ReplyID: in.ReplyID, Truncated: cutsOf(in),
	}
	p.Media = mediaPayloadOf(in.Media)
	for _, r := range in.Mentions {
		p.Mentions = append(p.Mentions, r.String())
	}
	if l := in.Location; l != nil {
		p.Location = &locationPayload{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
	}
	for _, c := range in.Contacts {
		p.Contacts = append(p.Contacts, contactPayload(c))
	}
	return Event{Type: TypeMessageUpsert, Key: key, Payload: p}
}

// The events that change an earlier message.
const (
	TypeMessageReaction = "message.reaction"
	TypeMessageEdit     = "message.edit"
	TypeMessageRevoke   = "message.revoke"
	TypeMessagePollVote = "message.poll_vote"
)

// changePayload is a reaction, edit or revoke: who changed which message.
type changePayload struct {
	Event      string  `json:"event"`
	WhatsAppID string  `json:"whatsapp_id"`
	TargetID   string  `json:"target_id"`
	From       string  `json:"from"`
	FromLID    *string `json:"from_lid"`
	FromPhone  *string `json:"from_phone"`
	Chat       string  `json:"chat"`
	PushName   string  `json:"push_name"`
	Timestamp  string  `json:"timestamp"`
	Emoji      *string `json:"emoji,omitempty"` // reactions only; "" when removed
	Text       *string `json:"text,omitempty"`  // edits only
	// Options are the names a poll vote chose (target_id is the poll);
	// [] when the voter took the vote back.
	Options   *[]string    `json:"options,omitempty"`
	Truncated []cutPayload `json:"truncated,omitempty"`
}

func changePayloadOf(in bridge.Incoming) changePayload {
	p := changePayload{
		Event: "message." + in.Type, WhatsAppID: in.WhatsAppID, TargetID: in.TargetID, From: in.From.String(),
		FromLID: optionalRecipient(in.FromLID), FromPhone: optionalRecipient(in.FromPhone), Chat: in.Chat.String(),
		PushName: in.PushName, Timestamp: bridge.FormatTime(in.Timestamp), Truncated: cutsOf(in),
	}
	switch in.Type {
	case bridge.IncomingReaction:
		p.Emoji = &in.Emoji
	case bridge.IncomingEdit:
		p.Text = &in.Text
	case bridge.IncomingPollVote:
		votes := append([]string{}, in.Votes...) // [] rather than null for none
		p.Options = &votes
	}
	return p
}

// optionalRecipient is r as the webhooks show it, or null when unknown.
func optionalRecipient(r bridge.Recipient) *string {
	if r.IsZero() {
		return nil
	}
	s := r.String()
	return &s
}

// restrictedUntil is st's restriction end in the events' time format; empty
// when sending is not restricted.
func restrictedUntil(st bridge.SessionStatus) string {
	if st.RestrictedUntil.IsZero() {
		return ""
	}
	return bridge.FormatTime(st.RestrictedUntil)
}
