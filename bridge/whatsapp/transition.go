package whatsapp

import (
	"time"

	"go.mau.fi/whatsmeow/types/events"
)

// Internal happenings that move the state besides whatsmeow's own events.
type (
	// linkStarted: a QR or pairing-code attempt opened a socket.
	linkStarted struct{}
	// linkEnded: the attempt ended without a link (QR codes ran out, error).
	linkEnded struct{ reason Reason }
	// connectStarted: a connect with stored credentials began.
	connectStarted struct{}
	// connectFailed: the connect with stored credentials did not succeed.
	connectFailed struct{}
	// loggedIn: whatsmeow's Connected, with the account read from its store.
	loggedIn struct{ account, pushName string }
	// heartbeat: the periodic check found the connection alive.
	heartbeat struct{}
	// wiped: the credentials were deleted (logout through the API).
	wiped struct{ reason Reason }
)

// transition is the session's whole state policy: the status after ev,
// observed at now, and whether it changed. It is pure so that every rule is a
// row in a table test. Events that do not concern the link return s unchanged.
func transition(s Status, ev any, now time.Time) (Status, bool) {
	next := s
	switch e := ev.(type) {
	case linkStarted:
		next.State, next.Reason = StatePairing, ReasonNone
	case linkEnded:
		if s.State != StatePairing {
			return s, false // the link succeeded meanwhile; its events rule
		}
		next.State, next.Reason = StateUnpaired, e.reason
	case *events.PairSuccess:
		next.State, next.Reason = StateConnecting, ReasonNone
		next.Account = e.ID.User
	case *events.PairError:
		next.State, next.Reason = StateUnpaired, ReasonPairError
	case connectStarted:
		next.State, next.Reason = StateConnecting, ReasonNone
	case connectFailed:
		next.State, next.Reason = StateDisconnected, ReasonNetwork
		next.ConnectedSince = time.Time{}
	case loggedIn:
		next.State, next.Reason = StateConnected, ReasonNone
		next.ConnectedSince, next.LastHeartbeat = now, now
		next.Account, next.PushName = e.account, e.pushName
	case *events.KeepAliveTimeout:
		if s.State != StateConnected {
			return s, false
		}
		next.State, next.Reason = StateDisconnected, ReasonKeepAliveTimeout
	case *events.KeepAliveRestored:
		if s.State != StateDisconnected || s.Reason != ReasonKeepAliveTimeout {
			return s, false
		}
		next.State, next.Reason = StateConnected, ReasonNone
		next.LastHeartbeat = now
	case heartbeat:
		if s.State != StateConnected {
			return s, false // a dead connection never gets a heartbeat
		}
		next.LastHeartbeat = now
	case *events.Disconnected:
		// A permanent reason (stream replaced, ban) or a logout arrives before
		// the socket closes; the close must not overwrite why it closed.
		if s.Reason.Permanent() || s.State == StateLoggedOut || s.State == StateUnpaired || s.State == StatePairing {
			return s, false
		}
		next.State, next.Reason = StateDisconnected, ReasonNetwork
		next.ConnectedSince = time.Time{}
	case *events.StreamReplaced:
		next = disconnected(s, ReasonStreamReplaced)
	case *events.TemporaryBan:
		next = disconnected(s, ReasonTemporaryBan)
	case *events.ClientOutdated:
		next = disconnected(s, ReasonClientOutdated)
	case *events.ConnectFailure:
		next = disconnected(s, ReasonConnectFailure)
	case *events.LoggedOut:
		next = Status{State: StateLoggedOut, Reason: ReasonLoggedOut, LastHeartbeat: s.LastHeartbeat}
	case wiped:
		next = Status{State: StateUnpaired, Reason: e.reason, LastHeartbeat: s.LastHeartbeat}
	default:
		return s, false
	}
	return next, next != s
}

func disconnected(s Status, r Reason) Status {
	s.State, s.Reason, s.ConnectedSince = StateDisconnected, r, time.Time{}
	return s
}
