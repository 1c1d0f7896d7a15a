package bridge

import (
	"time"

	"github.com/msgbridge/msgbridge/contract"
)

// SessionState and Reason are the contract's: the operator reads them too.
type (
	SessionState = contract.SessionState
	Reason       = contract.Reason
)

// SessionStatus is the session as the API, the dashboard and the operator
// see it.
type SessionStatus struct {
	State    SessionState
	Reason   Reason
	Account  string // the account's phone number, digits only
	PushName string
	// ConnectedSince is when the current connection logged in; zero when not
	// connected.
	ConnectedSince time.Time
	// LastHeartbeat is the last time the connection was known alive. It
	// survives restarts and disconnects: it tells when the link was last seen
	// alive, never that it is alive now.
	LastHeartbeat time.Time
	// RestrictedUntil is when WhatsApp's restriction of sending ends (reason
	// restricted while it lasts); zero when sending is not restricted.
	RestrictedUntil time.Time
}

// Connected reports a live link.
func (s SessionStatus) Connected() bool { return s.State == contract.StateConnected }

// Equal reports whether s and o say the same in every field.
func (s SessionStatus) Equal(o SessionStatus) bool {
	return s.State == o.State && s.Reason == o.Reason && s.Account == o.Account && s.PushName == o.PushName &&
		s.ConnectedSince.Equal(o.ConnectedSince) && s.LastHeartbeat.Equal(o.LastHeartbeat) &&
		s.RestrictedUntil.Equal(o.RestrictedUntil)
}

// Group is a group the linked account belongs to.
type Group struct {
	ID           string // the group's JID
	Subject      string
	Participants int
}

// LinkQR is the running link attempt's current QR code.
type LinkQR struct {
	Code string // empty when no attempt runs or none has a code yet
	// Since is when Code arrived, for observers that measure how soon a
	// rotation reaches the screen.
	Since time.Time
	// Attempt names the link attempt (numbered from 1 in this process), so
	// that a permission to see its codes can end with it; 0 when none runs.
	Attempt uint64
}
