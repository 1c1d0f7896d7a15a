package whatsapp

import "time"

// State is where the link to the WhatsApp account stands (DESIGN.md section 3).
type State string

// The session states.
const (
	// StateUnpaired: no credentials; a QR code or pairing code links one.
	StateUnpaired State = "unpaired"
	// StatePairing: a link attempt runs (QR codes rotate, or a pairing code
	// waits to be entered on the phone).
	StatePairing State = "pairing"
	// StateConnecting: credentials exist and the socket is being opened.
	StateConnecting State = "connecting"
	// StateConnected: logged in, and the keepalive answers.
	StateConnected State = "connected"
	// StateDisconnected: credentials exist but the link is down; Reason says
	// why and whether the bridge reconnects by itself.
	StateDisconnected State = "disconnected"
	// StateLoggedOut: WhatsApp ended the link (the phone removed the device);
	// the credentials are gone and a new link is needed.
	StateLoggedOut State = "logged_out"
)

// Reason qualifies a state, mostly a disconnect.
type Reason string

// The reasons.
const (
	ReasonNone             Reason = ""
	ReasonNetwork          Reason = "network"
	ReasonKeepAliveTimeout Reason = "keepalive_timeout"
	ReasonStreamReplaced   Reason = "stream_replaced"
	ReasonTemporaryBan     Reason = "temporary_ban"
	ReasonClientOutdated   Reason = "client_outdated"
	ReasonLoggedOut        Reason = "logged_out"
	ReasonConnectFailure   Reason = "connect_failure"
	ReasonPairError        Reason = "pair_error"
	ReasonQRTimeout        Reason = "qr_timeout"
	ReasonUserLogout       Reason = "user_logout"
)

// Permanent reports a reason after which the bridge does not reconnect by
// itself: reconnecting would fight another client (stream replaced), repeat
// a refused login, or use a client WhatsApp no longer accepts.
func (r Reason) Permanent() bool {
	switch r {
	case ReasonStreamReplaced, ReasonTemporaryBan, ReasonClientOutdated, ReasonLoggedOut:
		return true
	}
	return false
}

// Status is the session as the API and the operator see it.
type Status struct {
	State    State
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
}

// Connected reports a live link.
func (s Status) Connected() bool { return s.State == StateConnected }

// initialStatus is the status at start-up: never connected, whatever was
// stored (the anti-ghost rule of DESIGN.md section 5). What the stored row
// keeps is when the link was last seen alive and whose account it was.
func initialStatus(stored Status, hasCredentials bool) Status {
	s := Status{LastHeartbeat: stored.LastHeartbeat}
	if hasCredentials {
		s.State = StateConnecting
		s.Account, s.PushName = stored.Account, stored.PushName
		return s
	}
	s.State = StateUnpaired
	return s
}
