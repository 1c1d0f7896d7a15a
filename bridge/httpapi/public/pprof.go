package public

import (
	"net/http"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// pprofPrefix is where Go's profiles are served (PPROF=on), as
// `go tool pprof` expects them.
const pprofPrefix = "/debug/pprof/"

// defaultCPUProfile is how long GET /debug/pprof/profile records without
// ?seconds= (net/http/pprof's default too).
const defaultCPUProfile = 30 * time.Second

var errProfileRunning = bridge.Errorf(bridge.KindConflict, bridge.CodeProfileRunning, "a CPU profile is already being recorded; retry when it ends")

var errProfileSeconds = bridge.Invalid(bridge.CodeInvalidSeconds, "seconds must be a whole number of seconds from 1 to 300")

// pprofRoutes mounts Go's profiles behind the admin token when d.Pprof is
// on; off, the paths are unknown (404) like any other. They are served
// with runtime/pprof directly: net/http/pprof would also register itself on
// http.DefaultServeMux and link its trace and symbol handlers.
func (s *server) pprofRoutes(r *mux.Router) {
	if !s.Pprof {
		return
	}
	r.PathPrefix(pprofPrefix).Handler(s.Admin(servePprof)).Methods(httpkit.Get)
}

// servePprof answers /debug/pprof/<name>: the CPU profile ("profile", for
// ?seconds=) or a named profile (heap, allocs, goroutine, block, mutex,
// threadcreate; ?debug=1 or 2 as text); another name is no endpoint.
func servePprof(w http.ResponseWriter, r *http.Request) error {
	name := strings.TrimPrefix(r.URL.Path, pprofPrefix)
	if name == "profile" {
		return cpuProfile(w, r)
	}
	p := pprof.Lookup(name)
	if name == "" || p == nil {
		return httpkit.ErrNoEndpoint
	}
	debug, err := profileDebug(r.URL.Query().Get("debug"))
	if err != nil {
		return err
	}
	if debug > 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_ = p.WriteTo(w, debug) // the status is sent; a failure is a client gone
	return nil
}

var errProfileDebug = bridge.Invalid(bridge.CodeInvalidDebug, "debug must be 0, 1 or 2")

// profileDebug is ?debug=: absent (0, the pprof format), 0, 1 or 2 (text).
func profileDebug(v string) (int, error) {
	switch v {
	case "", "0":
		return 0, nil
	case "1", "2":
		return int(v[0] - '0'), nil
	}
	return 0, errProfileDebug
}

// cpuProfile records the CPU for ?seconds= (default 30, at most 300), or
// until the client goes away.
func cpuProfile(w http.ResponseWriter, r *http.Request) error {
	d := defaultCPUProfile
	if v := r.URL.Query().Get("seconds"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 300 {
			return errProfileSeconds
		}
		d = time.Duration(n) * time.Second
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := pprof.StartCPUProfile(w); err != nil {
		return errProfileRunning
	}
	select {
	case <-time.After(d):
	case <-r.Context().Done():
	}
	pprof.StopCPUProfile()
	return nil
}
