package guard

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
)

// Failed credentials allowed per client address and credential scope (API
// key, admin token on the API, dashboard sign-in) in Window: one
// mechanism for every scope, so no scope is a way around another's limit.
// The scopes count apart, so that an operator locked out of the dashboard
// can still read the audit log of it through the API. A locked address is
// refused in that scope, whatever it presents, until the window after its
// last failure passes.
const (
	MaxFailures = 5
	Window      = time.Minute
	// maxRefusalRecords bounds the audit records of refused credentials
	// per window for all addresses together: many addresses must not be
	// able to flood the audit log either.
	maxRefusalRecords = 60
)

// Recorder records a refused credential in the audit log
// (httpapi.AuditRecorder).
type Recorder interface {
	Record(r *http.Request, action audit.Action, outcome audit.Outcome, detail string)
}

// ErrTooManyFailures answers a request from an address that used up its
// failed credentials.
var ErrTooManyFailures = bridge.Errorf(bridge.KindRateLimited, bridge.CodeTooManyFailures,
	"too many failed credentials from this address; retry after the Retry-After seconds")

// Credentials checks credentials with one per-address failure limit in
// every scope, and audits refusals: the first failure of an address's
// window, the one that locks it and the first request refused while it is
// locked, at most maxRefusalRecords per window in all.
type Credentials struct {
	failures *Failures
	max      int
	audit    Recorder
	now      func() time.Time

	mu          sync.Mutex
	windowEnds  time.Time
	recorded    int
	notRecorded int
}

// NewCredentials returns a guard that records refusals into rec; now is
// the clock (time.Now when nil).
func NewCredentials(rec Recorder, now func() time.Time) *Credentials {
	return NewCredentialsAllowing(rec, now, MaxFailures)
}

// NewCredentialsAllowing is NewCredentials with maxFailures failures per
// window instead of MaxFailures (tests that present many wrong credentials
// from one address).
func NewCredentialsAllowing(rec Recorder, now func() time.Time, maxFailures int) *Credentials {
	if now == nil {
		now = time.Now
	}
	return &Credentials{failures: NewFailures(maxFailures, Window, now), audit: rec, now: now, max: maxFailures}
}

// Check is nil when presented is want; otherwise bridge.ErrUnauthorized, or
// ErrTooManyFailures with Retry-After set on w when r's address is locked.
// The right credential always passes, locked or not: behind a proxy or a
// NAT a stranger shares the operator's address, and a lock that refused
// the right credential would let any stranger lock the operator out. The
// credentials' length (at least 16 characters) is what stops guessing; the
// lock stops the noise of wrong ones. credential names what was presented,
// for the audit detail.
func (g *Credentials) Check(w http.ResponseWriter, r *http.Request, scope audit.Action, credential, presented string, want bridge.Secret) error {
	return g.Verdict(w, r, scope, credential, Matches(presented, want))
}

// Verdict is Check for a credential already compared (matched): a store of
// many keys (apikeys) compares them itself, and the failures count here,
// in the one limit per address.
func (g *Credentials) Verdict(w http.ResponseWriter, r *http.Request, scope audit.Action, credential string, matched bool) error {
	addr := string(scope) + " " + ClientAddress(r)
	if matched {
		if _, locked := g.failures.blocked(addr); !locked {
			g.failures.Reset(addr)
		}
		Verified(r)
		return nil
	}
	n, left, firstRefusal := g.failures.attempt(addr)
	if n == 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(left/time.Second)+1))
		if firstRefusal {
			g.record(r, scope, "rate limited")
		}
		return ErrTooManyFailures
	}
	switch n {
	case g.max:
		g.record(r, scope, fmt.Sprintf("wrong %s; locked for %s after %d failures", credential, Window, n))
	case 1:
		g.record(r, scope, "wrong "+credential)
	}
	return bridge.ErrUnauthorized
}

// record audits a refusal unless the window's budget of records is spent;
// the next record of a later window says how many were left out.
func (g *Credentials) record(r *http.Request, scope audit.Action, detail string) {
	g.mu.Lock()
	now := g.now()
	if !now.Before(g.windowEnds) {
		if g.notRecorded > 0 {
			detail += fmt.Sprintf(" (%d earlier refusals not recorded)", g.notRecorded)
		}
		g.windowEnds, g.recorded, g.notRecorded = now.Add(Window), 0, 0
	}
	if g.recorded >= maxRefusalRecords {
		g.notRecorded++
		g.mu.Unlock()
		return
	}
	g.recorded++
	g.mu.Unlock()
	g.audit.Record(r, scope, audit.OutcomeRejected, detail)
}
