package httpapi

import (
	"database/sql"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// Deps is what the API's handlers read. Later packages (session, dispatch,
// admin) add their own fields; each handler depends only on what it uses.
type Deps struct {
	// Version of this build, reported by /health.
	Version string
	// Started is when the process started; /health reports the uptime.
	Started time.Time
	// Now is the clock; time.Now in production.
	Now func() time.Time
	// Session is the WhatsApp link.
	Session Session
	// AdminToken guards /session/* (but status) and /api/admin/*.
	AdminToken bridge.Secret
	// Messages is the send queue and message log.
	Messages Messages
	// Send configures POST /send; its APIKey also guards the message log.
	Send SendConfig
	// DB is bridge.db, which delivery analytics read.
	DB *sql.DB
	// Audit records admin and session actions in the weekly audit log.
	Audit AuditRecorder
	// LogFiles are the daily log files the purge endpoint deletes.
	LogFiles LogFiles
	// Webhooks is the webhook outbox, whose dead letters admins list and
	// redeliver.
	Webhooks *webhook.Outbox
	// Metrics serves GET /metrics.
	Metrics http.Handler
	// Dashboard, when set, serves the operator's web page under /dashboard/;
	// it does its own sign-in and CSRF checks.
	Dashboard http.Handler
	Log       logr.Logger
}

// NewRouter returns the bridge's HTTP handler.
func NewRouter(d Deps) http.Handler {
	if d.Now == nil {
		d.Now = time.Now
	}
	r := mux.NewRouter()
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such endpoint")
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed on this endpoint")
	})
	r.Handle("/health", healthHandler(d)).Methods(http.MethodGet, http.MethodHead)

	r.Handle("/metrics", d.Metrics).Methods(http.MethodGet)
	if d.Dashboard != nil {
		r.PathPrefix("/dashboard/").Handler(d.Dashboard)
		r.Handle("/dashboard", http.RedirectHandler("/dashboard/", http.StatusMovedPermanently))
	}

	// Admin routes check the token first, so that unauthenticated requests
	// never reach the audit log; audited ones record their outcome.
	admin := func(h http.Handler) http.Handler { return requireAdmin(d.AdminToken, h) }
	audited := func(action audit.Action, h http.Handler) http.Handler {
		return requireAdmin(d.AdminToken, d.Audit.Middleware(action, h))
	}
	r.Handle("/session/status", sessionStatus(d.Session)).Methods(http.MethodGet)
	r.Handle("/session/qr", audited(audit.ActionPairingQR, sessionQR(d.Session))).Methods(http.MethodGet)
	r.Handle("/session/pairing-code", audited(audit.ActionPairingCode, sessionPairingCode(d.Session))).Methods(http.MethodPost)
	r.Handle("/session/groups", admin(sessionGroups(d.Session))).Methods(http.MethodGet)
	r.Handle("/session/logout", audited(audit.ActionLogout, sessionLogout(d.Session))).Methods(http.MethodPost)
	r.Handle("/api/admin/state", admin(adminState(d.Session, d.Version))).Methods(http.MethodGet)
	r.Handle("/api/admin/logs", admin(LogsHandler(d.LogFiles, d.Audit))).Methods(http.MethodDelete)
	r.Handle("/api/admin/audit", admin(AuditListHandler(d.Audit.Log, d.Now, d.Log))).Methods(http.MethodGet)
	r.Handle("/api/admin/audit/{id}", admin(AuditDeleteHandler(d.Audit))).Methods(http.MethodDelete)
	r.Handle("/api/admin/webhooks/failed", admin(FailedHandler(d.Webhooks, d.Log))).Methods(http.MethodGet)
	r.Handle("/api/admin/webhooks/{id}/redeliver", audited(audit.ActionWebhookRedeliver, RedeliverHandler(d.Webhooks, d.Log))).Methods(http.MethodPost)
	r.Handle("/api/admin/analytics/delivery", admin(DeliveryAnalyticsHandler(d.DB, d.Now, d.Log))).Methods(http.MethodGet)

	r.Handle("/send", sendHandler(d.Messages, d.Send, d.Log)).Methods(http.MethodPost)
	apiKey := func(h http.Handler) http.Handler { return requireAPIKey(d.Send.APIKey, h) }
	r.Handle("/api/messages", apiKey(listMessages(d.Messages))).Methods(http.MethodGet)
	r.Handle("/api/messages/{id}", apiKey(getMessage(d.Messages))).Methods(http.MethodGet)
	return r
}
