package api

import (
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge/settings"
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
	AdminToken settings.Secret
	// Messages is the send queue and message log.
	Messages Messages
	// Send configures POST /send; its APIKey also guards the message log.
	Send SendConfig
	Log  logr.Logger
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

	admin := func(h http.Handler) http.Handler { return requireAdmin(d.AdminToken, h) }
	r.Handle("/session/status", sessionStatus(d.Session)).Methods(http.MethodGet)
	r.Handle("/session/qr", admin(sessionQR(d.Session))).Methods(http.MethodGet)
	r.Handle("/session/pairing-code", admin(sessionPairingCode(d.Session))).Methods(http.MethodPost)
	r.Handle("/session/groups", admin(sessionGroups(d.Session))).Methods(http.MethodGet)
	r.Handle("/session/logout", admin(sessionLogout(d.Session))).Methods(http.MethodPost)
	r.Handle("/api/admin/state", admin(adminState(d.Session, d.Version))).Methods(http.MethodGet)

	r.Handle("/send", sendHandler(d.Messages, d.Send, d.Log)).Methods(http.MethodPost)
	apiKey := func(h http.Handler) http.Handler { return requireAPIKey(d.Send.APIKey, h) }
	r.Handle("/api/messages", apiKey(listMessages(d.Messages))).Methods(http.MethodGet)
	r.Handle("/api/messages/{id}", apiKey(getMessage(d.Messages))).Methods(http.MethodGet)
	return r
}
