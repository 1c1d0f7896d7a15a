package whatsapp

import (
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

type (
	// restricted: WhatsApp restricts sending until the given time (zero:
	// it lifted the restriction).
	restricted struct{ until time.Time }
	// restrictionEnded: the restriction that was to end at the given time
	// did; a later one set meanwhile stays.
	restrictionEnded struct{ at time.Time }
)

func (restricted) sessionEvent()       {}
func (restrictionEnded) sessionEvent() {}

// restricting is the policy of WhatsApp's restrictions of sending. The
// link stays up (a restricted account still receives), so the state does
// not change; a connected session's reason says restricted while the
// restriction lasts, and RestrictedUntil when it ends, in any state.
func restricting(s bridge.SessionStatus, ev event, now time.Time) (next bridge.SessionStatus, known bool) {
	next = s
	switch e := ev.(type) {
	case restricted:
		next.RestrictedUntil = e.until
	case restrictionEnded:
		if s.RestrictedUntil.After(e.at) {
			return s, true // extended meanwhile
		}
		next.RestrictedUntil = time.Time{}
	default:
		return s, false
	}
	if s.State == contract.StateConnected {
		next.Reason = connectedReason(next, now)
	}
	return next, true
}

// connectedReason is the reason of a connected session: restricted while
// a restriction lasts, none otherwise.
func connectedReason(s bridge.SessionStatus, now time.Time) bridge.Reason {
	if s.RestrictedUntil.After(now) {
		return contract.ReasonRestricted
	}
	return contract.ReasonNone
}
