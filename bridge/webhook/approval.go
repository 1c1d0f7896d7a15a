package webhook

import "github.com/msgbridge/msgbridge/bridge"

// TypeMessageApproval: a send of a key with approval awaits a person, or
// was approved, rejected or not answered in time.
const TypeMessageApproval = "message.approval"

// The states of a message.approval event.
const (
	ApprovalAwaiting = "awaiting"
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"
	ApprovalExpired  = "expired"
)

type approvalPayload struct {
	Event      string `json:"event"`
	ID         string `json:"id"`
	WhatsAppID string `json:"whatsapp_id"`
	Recipient  string `json:"recipient"`
	Type       string `json:"type"`
	State      string `json:"state"`
	Timestamp  string `json:"timestamp"`
}

// approvalState is the message.approval state a status change of m is, or
// "" when it is none: held (AwaitingApproval), approved (Queued: the only
// change to Queued there is), rejected or expired (Failed for those
// reasons).
func approvalState(m bridge.Message) string {
	switch {
	case m.Status == bridge.StatusAwaitingApproval:
		return ApprovalAwaiting
	case m.Status == bridge.StatusQueued:
		return ApprovalApproved
	case m.Status == bridge.StatusFailed && m.LastError == bridge.FailApprovalRejected:
		return ApprovalRejected
	case m.Status == bridge.StatusFailed && m.LastError == bridge.FailApprovalExpired:
		return ApprovalExpired
	}
	return ""
}

// MessageEvents are the events of a change of m's status: message.status
// for what reached or failed on WhatsApp's side, message.approval for an
// approval's steps (both for a rejected or expired one, which failed).
// Both keep the message's order.
func MessageEvents(m bridge.Message) []Event {
	var out []Event
	if state := approvalState(m); state != "" {
		out = append(out, Event{Type: TypeMessageApproval, Key: "msg:" + m.WhatsAppID, Payload: approvalPayload{
			Event: TypeMessageApproval, ID: m.ID, WhatsAppID: m.WhatsAppID, Recipient: m.Recipient.JID(), Type: string(m.Type),
			State: state, Timestamp: bridge.FormatTime(m.UpdatedAt)}})
	}
	if m.Status != bridge.StatusAwaitingApproval && m.Status != bridge.StatusQueued {
		out = append(out, MessageStatusOf(m))
	}
	return out
}
