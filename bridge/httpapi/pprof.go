package httpapi

import (
	"net/http"
	"net/http/pprof" //nolint:gosec // G108: mounted only with PPROF=on, behind the admin token; the DefaultServeMux it registers on is never served
	rpprof "runtime/pprof"
	"strings"

	"github.com/gorilla/mux"
)

// pprofPrefix is where Go's profiles are served (PPROF=on), as
// `go tool pprof` expects them.
const pprofPrefix = "/debug/pprof/"

// pprofRoutes mounts Go's profiles behind the admin token when d.Pprof is
// on; off, the paths are unknown (404) like any other.
func (s *server) pprofRoutes(r *mux.Router) {
	if !s.Pprof {
		return
	}
	r.PathPrefix(pprofPrefix).Handler(s.admin(servePprof)).Methods(get)
}

// servePprof routes /debug/pprof/<name> to net/http/pprof: the CPU
// profile and trace (which take ?seconds=), and every named profile (heap,
// goroutine, allocs, block, mutex, threadcreate); another name is no
// endpoint (nor is the index page: the API description lists the names).
func servePprof(w http.ResponseWriter, r *http.Request) error {
	switch name := strings.TrimPrefix(r.URL.Path, pprofPrefix); name {
	case "profile":
		pprof.Profile(w, r)
	case "trace":
		pprof.Trace(w, r)
	case "cmdline":
		pprof.Cmdline(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	default:
		if name == "" || rpprof.Lookup(name) == nil {
			return errNoEndpoint
		}
		pprof.Handler(name).ServeHTTP(w, r)
	}
	return nil
}
