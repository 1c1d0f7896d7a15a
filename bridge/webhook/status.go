package webhook

import "github.com/msgbridge/msgbridge/bridge"

// TypeStatusUpdate is a contact's status update (STATUS_UPDATES on).
const TypeStatusUpdate = "status.update"

// statusUpdatePayload is a contact's status: who posted it and what, as
// message.upsert shows a message's sender and content.
type statusUpdatePayload struct {
	Event      string        `json:"event"`
	WhatsAppID string        `json:"whatsapp_id"`
	From       string        `json:"from"`
	FromLID    *string       `json:"from_lid"`
	FromPhone  *string       `json:"from_phone"`
	PushName   string        `json:"push_name"`
	Type       string        `json:"type"`
	Text       string        `json:"text"`
	Timestamp  string        `json:"timestamp"`
	Media      *mediaPayload `json:"media,omitempty"`
	Truncated  []cutPayload  `json:"truncated,omitempty"`
}

// StatusUpdate is a status.update event: in is a contact's status (its Chat
// is the status broadcast). The statuses of one contact keep their order.
func StatusUpdate(in bridge.Incoming) Event {
	return Event{Type: TypeStatusUpdate, Key: "status:" + in.From.String(), Payload: statusUpdatePayload{
		Event: TypeStatusUpdate, WhatsAppID: in.WhatsAppID, From: in.From.String(),
		FromLID: optionalRecipient(in.FromLID), FromPhone: optionalRecipient(in.FromPhone), PushName: in.PushName,
		Type: in.Type, Text: in.Text, Timestamp: bridge.FormatTime(in.Timestamp), Media: mediaPayloadOf(in.Media),
		Truncated: cutsOf(in),
	}}
}
