package bridge

import "time"

// Call is a voice or video call WhatsApp reported to the account: offered
// (call.offer) or ended (call.ended).
type Call struct {
	ID string
	// From names the caller: its phone number when known, else its LID;
	// FromLID and FromPhone are each set when known.
	From, FromLID, FromPhone Recipient
	// Group is a group call's JID; empty for a call between two.
	Group string
	Video bool
	At    time.Time
	// Rejected is why the bridge rejected the call (REJECT_CALLS: all, or
	// unknown for a caller who is not a contact); empty when it did not.
	Rejected RejectCalls
	// Ended is how the call ended, for call.ended: CallMissed,
	// CallRejected or CallAcceptedElsewhere.
	Ended string
}

// How a call ended.
const (
	CallMissed            = "missed"
	CallRejected          = "rejected"
	CallAcceptedElsewhere = "accepted_elsewhere"
)

// RejectCalls is REJECT_CALLS: which incoming calls the bridge rejects, as
// a busy line would, since nobody answers calls on a bridged account.
type RejectCalls string

const (
	RejectCallsOff     RejectCalls = "off"
	RejectCallsAll     RejectCalls = "all"
	RejectCallsUnknown RejectCalls = "unknown" // callers who are not in the account's contacts
)

// RejectCallsModes lists REJECT_CALLS' values.
var RejectCallsModes = []RejectCalls{RejectCallsOff, RejectCallsAll, RejectCallsUnknown}

// ContactIdentity is a contact's phone number and LID learned together
// after messages named the contact by one of them alone (contact.identity).
type ContactIdentity struct {
	Phone, LID Recipient
	PushName   string
	At         time.Time
}
