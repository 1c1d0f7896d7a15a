package whatsapp

import (
	"errors"
	"regexp"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
)

// WhatsApp's restriction signals, as the pinned whatsmeow delivers them:
//
//   - A send refused by the server ends in whatsmeow's
//     ErrServerReturnedError with the ack's error code ("server returned
//     error 463"): 429 is rate-overlimit, 463 the reach-out time lock (the
//     account may not start new conversations). Neither ack names an end.
//   - A query the send needs (usync device lists, prekeys) refused with
//     <error code="429" text="rate-overlimit"/> is whatsmeow.ErrIQRateOverLimit.
//   - The reach-out lock and its end are announced by a
//     <notification type="mex"><update>{"data":{"xwa2_notify_account_reachout_timelock":
//     {"is_active":true,"time_enforcement_ends":"<unix seconds>","enforcement_type":…}}}</update>,
//     which whatsmeow parses into events.NotifyAccountReachoutTimelock.
//
// A refusal with no known end pauses for an exponential back-off from
// RESTRICTION_BACKOFF, doubling per refusal in a row up to maxBackoff; a
// send that goes through resets it.

// maxBackoff caps the pause after repeated refusals that name no end.
const maxBackoff = time.Hour

// serverErrorCode finds the code in whatsmeow's "server returned error N".
var serverErrorCode = regexp.MustCompile(`server returned error (\d+)`)

// restrictionCode classifies a send error: bridge.RestrictionRateLimit or
// bridge.RestrictionReachout, or "" for any other failure.
func restrictionCode(err error) string {
	if errors.Is(err, whatsmeow.ErrIQRateOverLimit) {
		return bridge.RestrictionRateLimit
	}
	if !errors.Is(err, whatsmeow.ErrServerReturnedError) {
		return ""
	}
	switch m := serverErrorCode.FindStringSubmatch(err.Error()); {
	case m == nil:
		return ""
	case m[1] == "429":
		return bridge.RestrictionRateLimit
	case m[1] == "463":
		return bridge.RestrictionReachout
	}
	return ""
}

// backoff is the pause after refusals in a row that name no end: first,
// doubled for each earlier refusal, at most maxBackoff.
func backoff(first time.Duration, refusals int) time.Duration {
	d := first
	for range refusals {
		if d >= maxBackoff/2 {
			return maxBackoff
		}
		d *= 2
	}
	return min(d, maxBackoff)
}

// restrictions tracks what WhatsApp said about the account's sending.
type restrictions struct {
	first time.Duration // RESTRICTION_BACKOFF

	mu       sync.Mutex
	refusals int       // refusals in a row without a known end
	lockEnd  time.Time // the reach-out lock's end WhatsApp announced
}

// refused records a refused send at now and returns until when sending
// pauses: the announced lock's end when one is known, else the back-off.
func (r *restrictions) refused(now time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lockEnd.After(now) {
		return r.lockEnd
	}
	until := now.Add(backoff(r.first, r.refusals))
	r.refusals++
	return until
}

// sent records a send that went through: the next refusal starts the
// back-off over.
func (r *restrictions) sent() {
	r.mu.Lock()
	r.refusals = 0
	r.mu.Unlock()
}

// announced records the reach-out lock's state from WhatsApp's
// notification.
func (r *restrictions) announced(active bool, until time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if active {
		r.lockEnd = until
	} else {
		r.lockEnd = time.Time{}
	}
}

// restrictIfRefused turns a send error that is WhatsApp's restriction into
// a bridge.RestrictedError (so the queue holds without spending the
// message's retries) and shows the restriction in the session's status.
func (m *Session) restrictIfRefused(err error) error {
	code := restrictionCode(err)
	if code == "" {
		return err
	}
	until := m.restrict.refused(m.opts.Now())
	m.restrictUntil(until)
	return &bridge.RestrictedError{Code: code, Until: until, Err: err}
}

// restrictUntil shows sending as restricted until the given time (zero: no
// longer restricted) and clears it when that time comes.
func (m *Session) restrictUntil(until time.Time) {
	m.apply(restricted{until: until})
	if !until.IsZero() {
		m.endRestrictionAt(until)
	}
}

// endRestrictionAt clears the restriction that ends at until when that time
// comes (unless a later one replaced it meanwhile).
func (m *Session) endRestrictionAt(until time.Time) {
	time.AfterFunc(time.Until(until), func() { m.apply(restrictionEnded{at: until}) })
}

// RestrictedUntil is when WhatsApp's restriction of sending ends; zero when
// sending is not restricted now. The send queue holds until then.
func (m *Session) RestrictedUntil() time.Time {
	until := m.Status().RestrictedUntil
	if !until.After(m.opts.Now()) {
		return time.Time{}
	}
	return until
}

// reachoutAnnounced is WhatsApp's notice of the reach-out lock
// (events.NotifyAccountReachoutTimelock): it restricts or frees sending. An
// active lock without an end WhatsApp names is left to the refusals'
// back-off.
func (m *Session) reachoutAnnounced(e *events.NotifyAccountReachoutTimelock) {
	until := e.TimeEnforcementEnds.Time
	if e.IsActive && until.IsZero() {
		return
	}
	m.restrict.announced(e.IsActive, until)
	if e.IsActive && until.After(m.opts.Now()) {
		m.log.Info("WhatsApp announced a reach-out time lock", "until", bridge.FormatTime(until))
		m.restrictUntil(until)
		return
	}
	m.log.Info("WhatsApp lifted the reach-out time lock")
	m.restrictUntil(time.Time{})
}
