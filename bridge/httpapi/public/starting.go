package public

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/contract"
)

// LinkStarting is /health's word for the link while the bridge is still
// opening its databases and making the session.
const LinkStarting = "starting"

// errStartFailed answers the requests that waited for a start that failed;
// the process is about to exit with the reason in its log.
var errStartFailed = bridge.Errorf(bridge.KindUnavailable, bridge.CodeStartFailed,
	"the bridge failed to start and is stopping; its log says why")

// errStillStarting refuses a request beyond maxHeldWhileStarting: each held
// request holds a goroutine and a connection, which a flood during a long
// start (a migration rewriting a large bridge.db) must not multiply.
var errStillStarting = bridge.Errorf(bridge.KindUnavailable, bridge.CodeStillStarting,
	"the bridge is still starting and holds as many requests as it will; retry after the Retry-After seconds")

// maxHeldWhileStarting bounds the requests held at once, as the kernel's
// listen backlog bounded the connections that waited before the bridge
// served during its start.
const maxHeldWhileStarting = 1024

// Starting is the server's handler from the moment the bridge listens,
// before its databases are opened and migrated: GET /health answers at once
// (the link "starting"), so that a probe or a supervisor sees a live process
// without waiting for the disk; any other request waits until Ready hands over
// the bridge's router and is then served by it, as if it had come later.
// Nothing is refused because it came early, so a restart costs callers a
// delay, not an error.
type Starting struct {
	started time.Time
	done    chan struct{}
	once    sync.Once
	// waiting counts the requests held now, at most maxHeld.
	waiting atomic.Int32
	maxHeld int32
	// handler is the bridge's router once done is closed; nil when the
	// start failed.
	handler http.Handler
}

// NewStarting is a handler for a bridge that started at started.
func NewStarting(started time.Time) *Starting {
	return &Starting{started: started, done: make(chan struct{}), maxHeld: maxHeldWhileStarting}
}

// Ready hands every request, waiting or to come, to h.
func (s *Starting) Ready(h http.Handler) {
	s.once.Do(func() {
		s.handler = h
		close(s.done)
	})
}

// Failed answers the waiting requests, and any to come, 503 start_failed.
func (s *Starting) Failed() { s.once.Do(func() { close(s.done) }) }

func (s *Starting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case <-s.done:
	default:
		if r.URL.Path == "/health" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			s.health(w)
			return
		}
		if s.waiting.Add(1) > s.maxHeld {
			s.waiting.Add(-1)
			w.Header().Set("Retry-After", "1")
			httpkit.WriteErrorBody(w, httpkit.StatusOf(errStillStarting), errStillStarting.Code, errStillStarting.Message)
			return
		}
		select {
		case <-s.done:
			s.waiting.Add(-1)
		case <-r.Context().Done():
			s.waiting.Add(-1)
			return // the caller left; nobody reads an answer
		}
	}
	if s.handler == nil {
		httpkit.WriteErrorBody(w, httpkit.StatusOf(errStartFailed), errStartFailed.Code, errStartFailed.Message)
		return
	}
	s.handler.ServeHTTP(w, r)
}

// health is GET /health before the session exists: the same shape as the
// router's, without the send queue (not open yet).
func (s *Starting) health(w http.ResponseWriter) {
	now := time.Now()
	// A write that fails has lost its caller: nothing to tell.
	_ = httpkit.WriteJSON(w, http.StatusOK, healthResponse{
		Status:    "online",
		WhatsApp:  LinkStarting,
		Uptime:    int64(now.Sub(s.started) / time.Second),
		Version:   contract.BuildVersion(),
		Timestamp: bridge.FormatTime(now),
	})
}
