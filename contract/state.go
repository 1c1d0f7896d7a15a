package contract

// SessionState is where the link to the WhatsApp account stands.
type SessionState string

// The session states.
const (
	// StateUnpaired: no credentials; a QR code or pairing code links one.
	StateUnpaired SessionState = "unpaired"
	// StatePairing: a link attempt runs (QR codes rotate, or a pairing code
	// waits to be entered on the phone).
	StatePairing SessionState = "pairing"
	// StateConnecting: credentials exist and the socket is being opened.
	StateConnecting SessionState = "connecting"
	// StateConnected: logged in, and the keepalive answers.
	StateConnected SessionState = "connected"
	// StateDisconnected: credentials exist but the link is down; the reason
	// says why and whether the bridge reconnects by itself.
	StateDisconnected SessionState = "disconnected"
	// StateLoggedOut: WhatsApp ended the link (the phone removed the device);
	// the credentials are gone and a new link is needed.
	StateLoggedOut SessionState = "logged_out"
)

// SessionStates lists every state, in the order of a first link.
var SessionStates = []SessionState{
	StateUnpaired, StatePairing, StateConnecting, StateConnected, StateDisconnected, StateLoggedOut,
}

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
	// ReasonRestricted: connected, but WhatsApp restricts sending (a rate
	// limit or the reach-out time lock) until the admin state's
	// restricted_until; the bridge holds its queue until then.
	ReasonRestricted Reason = "restricted"
	// ReasonDiskFull: disconnected by the bridge itself because DATA_DIR's
	// free space fell below DISK_RESERVE; it reconnects by itself once
	// space is back.
	ReasonDiskFull Reason = "disk_full"
)

// Reasons lists every reason.
var Reasons = []Reason{
	ReasonNone, ReasonNetwork, ReasonKeepAliveTimeout, ReasonStreamReplaced, ReasonTemporaryBan,
	ReasonClientOutdated, ReasonLoggedOut, ReasonConnectFailure, ReasonPairError, ReasonQRTimeout, ReasonUserLogout, ReasonRestricted,
	ReasonDiskFull,
}

// Permanent reports a reason after which the bridge does not reconnect by
// itself: reconnecting would fight another client (stream replaced), repeat
// a refused login, or use a client WhatsApp no longer accepts.
func (r Reason) Permanent() bool {
	switch r {
	case ReasonStreamReplaced, ReasonTemporaryBan, ReasonClientOutdated, ReasonLoggedOut:
		return true
	case ReasonNone, ReasonNetwork, ReasonKeepAliveTimeout, ReasonConnectFailure,
		ReasonPairError, ReasonQRTimeout, ReasonUserLogout, ReasonRestricted, ReasonDiskFull:
		return false
	}
	return false
}
