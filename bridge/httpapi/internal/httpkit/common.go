package httpkit

import (
	"context"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/contract"
)

// Common is what every audience's handlers share, filled by the router:
// the clock, the log, the credential check and the audit log.
type Common struct {
	// Now is the clock; time.Now when nil.
	Now         func() time.Time
	Log         logr.Logger
	Credentials Credentials
	// Audit records admin, session and group actions in the weekly
	// audit log.
	Audit AuditRecorder
}

// Clock is c.Now, or time.Now when it is nil.
func (c Common) Clock() func() time.Time {
	if c.Now == nil {
		return time.Now
	}
	return c.Now
}

// Handler turns h into a handler that writes its error.
func (c Common) Handler(h HandlerFunc) http.Handler { return Handle(c.Log, h) }

// Admin guards h with the admin token.
func (c Common) Admin(h HandlerFunc) http.Handler { return c.RequireAdmin(c.Handler(h)) }

// Audited guards h with the admin token, then records its outcome as
// action: the token is checked first so that unauthenticated requests never
// reach the audit log.
func (c Common) Audited(action audit.Action, h HandlerFunc) http.Handler {
	return c.RequireAdmin(c.Audit.Middleware(action, c.Handler(h)))
}

// RequireAdmin admits requests whose X-Admin-Token header is the admin token,
// within the per-address limit on failed credentials.
func (c Common) RequireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := c.Credentials.CheckAdminToken(w, r); err != nil {
			WriteError(w, c.Log, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Guarded are the two guards of admin operations: the admin API's (admin
// token) or the dashboard's (none here: it checks its own session).
type Guarded struct {
	Admin   func(HandlerFunc) http.Handler
	Audited func(audit.Action, HandlerFunc) http.Handler
}

// The methods of the routes, short for the route tables.
const (
	Get   = http.MethodGet
	Post  = http.MethodPost
	Del   = http.MethodDelete
	Patch = http.MethodPatch
)

// Route is one route of a table.
type Route struct {
	Path, Method string
	H            HandlerFunc
}

// Mount adds routes to r, each through wrap.
func Mount(r *mux.Router, routes []Route, wrap func(HandlerFunc) http.Handler) {
	for _, route := range routes {
		r.Handle(route.Path, wrap(route.H)).Methods(route.Method)
	}
}

// Pacing is the send queue's state (*sendqueue.Queue).
type Pacing interface {
	Pace(ctx context.Context) (sendqueue.Pace, error)
}

// SendQueueOf is the send queue as /health and the admin state show it;
// nil without a Pacing, or when it cannot be read (the probe must not fail
// for it: it reports the process).
func SendQueueOf(ctx context.Context, p Pacing, log logr.Logger) *contract.SendQueue {
	if p == nil {
		return nil
	}
	pace, err := p.Pace(ctx)
	if err != nil {
		log.Error(err, "read the send queue's pace")
		return nil
	}
	// To the millisecond, as the answers' scheduled_at, so that the two
	// compare equal.
	next := OptionalTime(pace.NextSendAt.Truncate(time.Millisecond))
	return &contract.SendQueue{Depth: pace.Depth, Rate: pace.Rate.String(), NextSendAt: next}
}

// OptionalTime is t in UTC, nil when it is zero.
func OptionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// NoStore keeps a handler's answers out of every cache, whatever
// Cache-Control the handler set (the media endpoint's is private).
func NoStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(noStoreWriter{w}, r)
	})
}

type noStoreWriter struct{ http.ResponseWriter }

func (w noStoreWriter) WriteHeader(code int) {
	w.Header().Set("Cache-Control", "no-store")
	w.ResponseWriter.WriteHeader(code)
}

func (w noStoreWriter) Write(b []byte) (int, error) {
	w.Header().Set("Cache-Control", "no-store")
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w noStoreWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
