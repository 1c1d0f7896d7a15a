package messaging

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// hubKeep and hubKeepBytes bound what the hub holds for its streams, the
// latest events: a stream further behind reads the log itself until it
// catches up. The bytes bound memory when the events are large (a text of
// 64 KiB makes a payload as large).
const (
	hubKeep      = 4 * streamPage
	hubKeepBytes = 4 << 20
)

// hubRetry is the pause after a failed read of the log before the next.
const hubRetry = time.Second

// eventHub reads the event log once for every open stream (a fan-out).
// While one stream is open, one goroutine follows the log and holds its
// latest events; each stream takes what follows its own position from
// there. Before, every stream read the log at every event: 5,000 streams
// made 5,000 queries an event.
type eventHub struct {
	log EventLog
	lg  logr.Logger

	mu      sync.Mutex
	readers int
	gen     int           // the follower's generation: a stopped one writes nothing
	stop    chan struct{} // closed when the last stream leaves
	ready   bool          // base is read: the hub holds every event after base
	base    int64
	recent  []webhook.Logged // the events after base, oldest first, at most hubKeep
	bytes   int              // the payloads' bytes in recent, at most hubKeepBytes
	changed chan struct{}    // closed at every change of what the hub holds
}

func newEventHub(log EventLog, lg logr.Logger) *eventHub {
	return &eventHub{log: log, lg: lg, changed: make(chan struct{})}
}

// join counts a stream in, starting the follower for the first; leave,
// which it returns, counts it out, and stops the follower with the last.
func (h *eventHub) join() (leave func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.readers++
	if h.readers == 1 {
		h.gen++
		h.stop, h.ready, h.recent, h.bytes = make(chan struct{}), false, nil, 0
		go h.follow(h.gen, h.stop)
	}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.readers--
		if h.readers == 0 {
			close(h.stop)
		}
	}
}

// since is up to streamPage events after after that the hub holds, and a
// channel closed when it holds more. covered is false when the hub does
// not hold what follows after (a stream resuming from further back): the
// stream reads that from the log itself.
func (h *eventHub) since(after int64) (page []webhook.Logged, covered bool, changed <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ready {
		return nil, true, h.changed
	}
	if after < h.base {
		return nil, false, h.changed
	}
	i := sort.Search(len(h.recent), func(i int) bool { return h.recent[i].Seq > after })
	end := min(len(h.recent), i+streamPage)
	return slices.Clip(h.recent[i:end]), true, h.changed
}

// follow reads the log after its newest event at every event logged,
// until stop closes.
func (h *eventHub) follow(gen int, stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-stop; cancel() }()
	head, err := h.log.LatestEventID(ctx)
	for err != nil {
		if !h.pause(ctx, err) {
			return
		}
		head, err = h.log.LatestEventID(ctx)
	}
	h.publish(gen, head, nil)
	for {
		// Take next before Settle and the read, as a stream did alone:
		// an event announced before its commit is read once Settle
		// returns, and one announced later closes next.
		next := h.log.Published()
		page, err := h.read(ctx, head)
		if err != nil {
			if !h.pause(ctx, err) {
				return
			}
			continue
		}
		if len(page) > 0 {
			head = page[len(page)-1].Seq
			h.publish(gen, head, page)
		}
		if len(page) == streamPage {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-next:
		}
	}
}

func (h *eventHub) read(ctx context.Context, head int64) ([]webhook.Logged, error) {
	if err := h.log.Settle(ctx); err != nil {
		return nil, err
	}
	return h.log.EventsAfter(ctx, head, streamPage)
}

// pause waits hubRetry after a failed read; false when the hub stopped.
func (h *eventHub) pause(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	h.lg.Error(err, "could not read the event log for the event streams; retrying")
	select {
	case <-ctx.Done():
		return false
	case <-time.After(hubRetry):
		return true
	}
}

// publish adds page, the events up to head, to what the hub holds (the
// first call, with none, sets where it starts) and wakes the streams.
func (h *eventHub) publish(gen int, head int64, page []webhook.Logged) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if gen != h.gen {
		return
	}
	if !h.ready {
		h.ready, h.base = true, head
	}
	h.recent = append(h.recent, page...)
	for _, ev := range page {
		h.bytes += len(ev.Payload)
	}
	drop := 0
	for drop < len(h.recent) && (len(h.recent)-drop > hubKeep || h.bytes > hubKeepBytes) {
		h.bytes -= len(h.recent[drop].Payload)
		drop++
	}
	if drop > 0 {
		h.base = h.recent[drop-1].Seq
		h.recent = slices.Clone(h.recent[drop:])
	}
	close(h.changed)
	h.changed = make(chan struct{})
}
