// Package public is the HTTP API's endpoints for everyone: GET /health
// (and the same answer before the link exists, Starting), GET /metrics,
// the API description (/openapi.json, /docs/) and, behind the admin token,
// Go's profiles (/debug/pprof/).
package public

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/openapi"
)

// Link is the WhatsApp link as /health reports it.
type Link interface {
	Status() bridge.SessionStatus
}

// Deps is what the public endpoints read.
type Deps struct {
	// Started is when the process started; /health reports the uptime.
	Started time.Time
	// Link is the WhatsApp link whose state /health reports.
	Link Link
	// Pacing shows the send queue in /health; nil leaves it out.
	Pacing httpkit.Pacing
	// Metrics serves GET /metrics; nil leaves it out.
	Metrics http.Handler
	// Pprof serves Go's profiles under /debug/pprof/ behind the admin
	// token (PPROF=on); off: those paths are 404.
	Pprof bool
}

// server is the public endpoints: its handlers are its methods.
type server struct {
	Deps
	httpkit.Common
}

// Mount adds the public endpoints to r.
func Mount(r *mux.Router, d Deps, c httpkit.Common) {
	c.Now = c.Clock()
	s := &server{Deps: d, Common: c}
	r.Handle("/health", s.Handler(s.health)).Methods(httpkit.Get, http.MethodHead)
	if s.Metrics != nil {
		r.Handle("/metrics", s.Metrics).Methods(httpkit.Get)
	}
	r.Handle("/openapi.json", openapi.Handler()).Methods(httpkit.Get, http.MethodHead)
	r.PathPrefix("/docs/").Handler(openapi.DocsHandler())
	r.Handle("/docs", http.RedirectHandler("/docs/", http.StatusMovedPermanently))
	s.pprofRoutes(r)
}
