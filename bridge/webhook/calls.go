package webhook

import (
	"github.com/msgbridge/msgbridge/bridge"
)

// The events of calls.
const (
	TypeCallOffer = "call.offer"
	TypeCallEnded = "call.ended"
)

type callPayload struct {
	Event     string  `json:"event"`
	CallID    string  `json:"call_id"`
	From      string  `json:"from"`
	FromLID   *string `json:"from_lid"`
	FromPhone *string `json:"from_phone"`
	Group     string  `json:"group,omitempty"`
	Video     bool    `json:"video"`
	Rejected  string  `json:"rejected,omitempty"`
	Reason    string  `json:"reason,omitempty"`
	Timestamp string  `json:"timestamp"`
}

// CallEvent is call.offer for a call that rings, call.ended (with its
// reason) for one that ended. A call's events are delivered in order, after
// the caller's earlier messages.
func CallEvent(c bridge.Call) Event {
	typ := TypeCallOffer
	if c.Ended != "" {
		typ = TypeCallEnded
	}
	return Event{Type: typ, Key: "chat:" + c.From.String(), Payload: callPayload{
		Event: typ, CallID: c.ID, From: c.From.String(), FromLID: optionalRecipient(c.FromLID),
		FromPhone: optionalRecipient(c.FromPhone), Group: c.Group, Video: c.Video, Rejected: string(c.Rejected),
		Reason: c.Ended, Timestamp: bridge.FormatTime(c.At),
	}}
}
