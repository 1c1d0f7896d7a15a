package webhook

import "github.com/msgbridge/msgbridge/bridge"

// TypeContactIdentity: a contact's phone number and LID, learned together.
const TypeContactIdentity = "contact.identity"

type identityPayload struct {
	Event     string `json:"event"`
	Phone     string `json:"phone"`
	LID       string `json:"lid"`
	PushName  string `json:"push_name"`
	Timestamp string `json:"timestamp"`
}

// ContactIdentity is the contact.identity event: the contact that earlier
// events named by its number alone, or by its LID alone, is one person. It
// keeps the order of the contact's chat, before the message that taught it.
func ContactIdentity(c bridge.ContactIdentity) Event {
	return Event{Type: TypeContactIdentity, Key: "chat:" + c.Phone.String(), Payload: identityPayload{
		Event: TypeContactIdentity, Phone: c.Phone.String(), LID: c.LID.String(), PushName: c.PushName,
		Timestamp: bridge.FormatTime(c.At)}}
}
