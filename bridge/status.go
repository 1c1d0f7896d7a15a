package bridge

import "strings"

// Status is where an outgoing message stands. It only moves forward:
// [AwaitingApproval ->] Queued -> Sent -> Delivered -> Read, or to Failed
// from AwaitingApproval (rejected, or approval_expired) or Queued.
type Status string

// The statuses.
const (
	// StatusAwaitingApproval: a send of a key with approval, held until a
	// person approves it (then Queued) or rejects it (Failed).
	StatusAwaitingApproval Status = "AwaitingApproval"
	StatusQueued           Status = "Queued"
	StatusSent             Status = "Sent"
	StatusDelivered        Status = "Delivered"
	StatusRead             Status = "Read"
	StatusFailed           Status = "Failed"
)

// Statuses lists every status in the order a message may pass them.
var Statuses = []Status{StatusAwaitingApproval, StatusQueued, StatusSent, StatusDelivered, StatusRead, StatusFailed}

// Rank orders the statuses: a message's status only moves to a higher rank.
// Failed can only follow Queued (or AwaitingApproval), so it shares Sent's
// rank: a late Delivered never follows it, and it never follows Sent.
func (s Status) Rank() int {
	switch s {
	case StatusAwaitingApproval:
		return 0
	case StatusQueued:
		return 1
	case StatusSent, StatusFailed:
		return 2
	case StatusDelivered:
		return 3
	case StatusRead:
		return 4
	}
	return -1
}

// Sent reports a message that reached WhatsApp: Sent or any later status,
// never Queued or Failed.
func (s Status) Sent() bool { return s.Rank() >= StatusSent.Rank() && s != StatusFailed }

// Valid reports one of the statuses.
func (s Status) Valid() bool { return s.Rank() >= 0 }

// Advances reports whether a message in status s may move to next.
func (s Status) Advances(next Status) bool {
	if s == StatusFailed || next == StatusFailed {
		return (s == StatusQueued || s == StatusAwaitingApproval) && next == StatusFailed
	}
	return next.Valid() && next.Rank() > s.Rank()
}

// Through lists the statuses a message passes when it moves from s to
// next, next included: a Read receipt for a Queued message passed Sent and
// Delivered on its way. Empty when s may not move to next.
func (s Status) Through(next Status) []Status {
	if !s.Advances(next) {
		return nil
	}
	if next == StatusFailed {
		return []Status{StatusFailed}
	}
	var out []Status
	for _, st := range Statuses {
		if st != StatusFailed && st != StatusAwaitingApproval && st.Rank() > s.Rank() && st.Rank() <= next.Rank() {
			out = append(out, st)
		}
	}
	return out
}

// ParseStatus accepts a status as the API spells it (Queued), in any case
// (queued, QUEUED): a filter takes whatever spelling a client kept.
func ParseStatus(s string) (Status, bool) {
	for _, st := range Statuses {
		// Equal lengths: only ASCII letters fold (never the Kelvin sign or
		// the long s, which Unicode folds to k and s).
		if len(s) == len(st) && strings.EqualFold(s, string(st)) {
			return st, true
		}
	}
	return "", false
}
