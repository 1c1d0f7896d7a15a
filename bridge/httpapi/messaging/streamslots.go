package messaging

import (
	"net/http"
	"sync"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/guard"
)

// The caps of GET /api/events when Deps leaves them zero, as the settings'
// defaults (EVENT_STREAMS, EVENT_STREAMS_PER_ADDRESS).
const (
	defaultEventStreams           = 64
	defaultEventStreamsPerAddress = 8
	// streamRetryAfter is what a refused stream is told to wait: a slot
	// frees when a stream ends, which no clock predicts.
	streamRetryAfter = 5 * time.Second
)

// streamSlots caps the open event streams in total and per client address
// (the forwarded one behind TRUSTED_PROXIES): each holds two goroutines and
// a connection for as long as it lasts, and one caller with the key opened
// thousands.
type streamSlots struct {
	mu        sync.Mutex
	max       int
	perAddr   int
	open      int
	byAddress map[string]int
}

func newStreamSlots(total, perAddress int) *streamSlots {
	if total <= 0 {
		total = defaultEventStreams
	}
	if perAddress <= 0 {
		perAddress = defaultEventStreamsPerAddress
	}
	return &streamSlots{max: total, perAddr: min(perAddress, total), byAddress: map[string]int{}}
}

// take holds a slot for r's stream; the release it returns gives it back.
// Beyond a cap it answers 429 too_many_streams with a Retry-After.
func (l *streamSlots) take(w http.ResponseWriter, r *http.Request) (release func(), err error) {
	addr := guard.ClientAddress(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.max || l.byAddress[addr] >= l.perAddr {
		return nil, withRetryAfter(w, &bridge.Error{Kind: bridge.KindRateLimited, Code: bridge.CodeTooManyStreams,
			Message: "too many event streams are open (EVENT_STREAMS in all, EVENT_STREAMS_PER_ADDRESS from one address); " +
				"close one, or retry after the Retry-After seconds",
			Err: bridge.RetryAfter(streamRetryAfter)})
	}
	l.open++
	l.byAddress[addr]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.open--
		if l.byAddress[addr]--; l.byAddress[addr] == 0 {
			delete(l.byAddress, addr)
		}
	}, nil
}
