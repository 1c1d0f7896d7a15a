package whatsapp

import (
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// transition is the session's whole state policy: the status after ev,
// observed at now, and whether it changed. It is pure so that every rule is a
// row in a table test. Events that do not concern the link return s unchanged.
func transition(s bridge.SessionStatus, ev event, now time.Time) (bridge.SessionStatus, bool) {
	next, known := linking(s, ev, now)
	if !known {
		next, known = liveness(s, ev, now)
	}
	if !known {
		next, known = restricting(s, ev, now)
	}
	if !known {
		return s, false
	}
	return next, next != s
}

// linking is the policy of the events that link an account and log it in.
func linking(s bridge.SessionStatus, ev event, now time.Time) (next bridge.SessionStatus, known bool) {
	next = s
	switch e := ev.(type) {
	case linkStarted:
		next.State, next.Reason = contract.StatePairing, contract.ReasonNone
	case linkEnded:
		if s.State != contract.StatePairing {
			return s, true // the link succeeded meanwhile; its events rule
		}
		next.State, next.Reason = contract.StateUnpaired, e.reason
	case paired:
		next.State, next.Reason = contract.StateConnecting, contract.ReasonNone
		next.Account = e.account
	case pairFailed:
		next.State, next.Reason = contract.StateUnpaired, contract.ReasonPairError
	case connectStarted:
		next.State, next.Reason = contract.StateConnecting, contract.ReasonNone
	case connectFailed:
		next = disconnected(s, contract.ReasonNetwork)
	case loggedIn:
		next.State, next.Reason = contract.StateConnected, connectedReason(s, now)
		next.ConnectedSince, next.LastHeartbeat = now, now
		next.Account, next.PushName = e.account, e.pushName
	default:
		return s, false
	}
	return next, true
}

// liveness is the policy of the events that keep, lose or end a link.
func liveness(s bridge.SessionStatus, ev event, now time.Time) (next bridge.SessionStatus, known bool) {
	next = s
	switch e := ev.(type) {
	case keepAliveLost:
		if s.State == contract.StateConnected {
			next.State, next.Reason = contract.StateDisconnected, contract.ReasonKeepAliveTimeout
		}
	case keepAliveBack:
		if s.State == contract.StateDisconnected && s.Reason == contract.ReasonKeepAliveTimeout {
			next.State, next.Reason = contract.StateConnected, connectedReason(s, now)
			next.LastHeartbeat = now
		}
	case heartbeat:
		if s.State == contract.StateConnected { // a dead connection never gets a heartbeat
			next.LastHeartbeat = now
		}
	case socketClosed:
		// A permanent reason (stream replaced, ban) or a logout arrives before
		// the socket closes; the close must not overwrite why it closed.
		if !s.Reason.Permanent() && s.Reason != contract.ReasonDiskFull && s.State != contract.StateLoggedOut && s.State != contract.StateUnpaired && s.State != contract.StatePairing {
			next = disconnected(s, contract.ReasonNetwork)
		}
	case cutOff:
		next = disconnected(s, e.reason)
	case diskLow:
		// Only a linked account has a link to stop; linking writes too, but
		// a person waits for it and sees the reason in its failure.
		if s.State == contract.StateConnecting || s.State == contract.StateConnected || s.State == contract.StateDisconnected {
			next = disconnected(s, contract.ReasonDiskFull)
		}
	case loggedOut:
		next = bridge.SessionStatus{State: contract.StateLoggedOut, Reason: contract.ReasonLoggedOut, LastHeartbeat: s.LastHeartbeat}
	case wiped:
		next = bridge.SessionStatus{State: contract.StateUnpaired, Reason: e.reason, LastHeartbeat: s.LastHeartbeat}
	default:
		return s, false
	}
	return next, true
}

func disconnected(s bridge.SessionStatus, r bridge.Reason) bridge.SessionStatus {
	s.State, s.Reason, s.ConnectedSince = contract.StateDisconnected, r, time.Time{}
	return s
}

// initialStatus is the status at start-up: never connected, whatever was
// stored (the anti-ghost rule: a stored "connected" may be a ghost). What the stored row
// keeps is when the link was last seen alive and whose account it was.
func initialStatus(stored bridge.SessionStatus, hasCredentials bool) bridge.SessionStatus {
	s := bridge.SessionStatus{LastHeartbeat: stored.LastHeartbeat}
	if hasCredentials {
		s.State = contract.StateConnecting
		s.Account, s.PushName = stored.Account, stored.PushName
		return s
	}
	s.State = contract.StateUnpaired
	return s
}
