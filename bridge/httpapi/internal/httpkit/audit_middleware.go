package httpkit

import (
	"context"
	"net/http"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/guard"
)

// AuditTrail is the weekly audit trail (*audit.Trail). Record IDs are opaque.
type AuditTrail interface {
	Record(ctx context.Context, e audit.Entry) (string, error)
	List(ctx context.Context, week audit.Week) ([]audit.Entry, error)
	// Delete removes record id of week; audit.ErrNotFound when week holds
	// no such record, whatever id is.
	Delete(ctx context.Context, week audit.Week, id string) error
}

// OutcomeOf maps an HTTP status to an outcome.
func OutcomeOf(status int) audit.Outcome {
	switch {
	case status < 400:
		return audit.OutcomeSuccess
	case status == http.StatusNotFound:
		return audit.OutcomeNotFound
	case status < 500:
		return audit.OutcomeRejected
	default:
		return audit.OutcomeFailure
	}
}

// OutcomeOfError is the outcome of an action that ended with err (nil:
// success), by the status that answers it.
func OutcomeOfError(err error) audit.Outcome {
	if err == nil {
		return audit.OutcomeSuccess
	}
	return OutcomeOf(StatusOf(err))
}

// AuditRecorder records actions on behalf of HTTP handlers. A failure to record
// is logged rather than returned: by then the action has happened and the
// client has its answer, and a broken audit disk must not hide that the
// action took place from the operator, who sees the log line.
type AuditRecorder struct {
	Trail  AuditTrail
	Logger logr.Logger
}

// Record records action with its outcome, the request's client address and
// detail.
func (rec AuditRecorder) Record(r *http.Request, action audit.Action, outcome audit.Outcome, detail string) {
	// The action is done whether or not the client is still connected: the
	// record must not be lost to a cancelled request context.
	if rec.Trail == nil {
		return // no audit log (tests of other parts)
	}
	ctx := context.WithoutCancel(r.Context())
	e := audit.Entry{Action: action, Outcome: outcome, Client: guard.ClientAddress(r), Detail: detail}
	if _, err := rec.Trail.Record(ctx, e); err != nil {
		rec.Logger.Error(err, "audit record lost", "action", string(action), "outcome", string(outcome), "client", e.Client)
	}
}

// RecordResult records action with the outcome err implies (nil: success)
// and returns err, so that a handler can end with it.
func (rec AuditRecorder) RecordResult(r *http.Request, action audit.Action, detail string, err error) error {
	rec.Record(r, action, OutcomeOfError(err), detail)
	return err
}

// Middleware records one action per request served by next, with the
// outcome its status code implies. Put it inside the admin-token check, so
// that unauthenticated requests cannot fill the audit log.
func (rec AuditRecorder) Middleware(action audit.Action, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		rec.Record(r, action, OutcomeOf(sw.status), "")
	})
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the real writer (flush,
// deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
