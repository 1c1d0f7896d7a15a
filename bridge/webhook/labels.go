package webhook

import "github.com/msgbridge/msgbridge/bridge"

// The events of labels (WhatsApp Business), whichever device changed them.
const (
	TypeLabelChanged = "label.changed"
	TypeLabelChat    = "label.chat"
	TypeLabelMessage = "label.message"
)

type labelEditPayload struct {
	Event     string `json:"event"`
	LabelID   string `json:"label_id"`
	Name      string `json:"name"`
	Color     int    `json:"color"`
	Deleted   bool   `json:"deleted"`
	Timestamp string `json:"timestamp"`
}

type labelAssociationPayload struct {
	Event      string `json:"event"`
	LabelID    string `json:"label_id"`
	Chat       string `json:"chat"`
	WhatsAppID string `json:"whatsapp_id,omitempty"`
	Labeled    bool   `json:"labeled"`
	Timestamp  string `json:"timestamp"`
}

// LabelEvent is label.changed (a label created, renamed, recoloured or
// deleted), label.chat or label.message (a label put on or taken off). All
// label events keep their order, so that a mirror replays them as they
// happened.
func LabelEvent(c bridge.LabelChange) Event {
	at := bridge.FormatTime(c.At)
	switch c.Kind {
	case bridge.LabelChat, bridge.LabelMessage:
		typ, id := TypeLabelChat, ""
		if c.Kind == bridge.LabelMessage {
			typ, id = TypeLabelMessage, c.MessageID
		}
		return Event{Type: typ, Key: "labels", Payload: labelAssociationPayload{Event: typ, LabelID: c.Label,
			Chat: chatOf(c.Chat), WhatsAppID: id, Labeled: c.Labeled, Timestamp: at}}
	}
	return Event{Type: TypeLabelChanged, Key: "labels", Payload: labelEditPayload{Event: TypeLabelChanged, LabelID: c.Label,
		Name: c.Name, Color: c.Color, Deleted: c.Deleted, Timestamp: at}}
}

// chatOf names a chat as the other events do: a phone number's digits, a
// group's or a LID's JID.
func chatOf(jid string) string {
	if r, err := bridge.RecipientFromJID(jid); err == nil {
		return r.String()
	}
	return jid
}
