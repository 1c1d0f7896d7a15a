package api

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"
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
	// SessionState reports the WhatsApp link's state (DESIGN.md section 3).
	SessionState func() string
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
	return r
}
