package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// EventLog is the log of every event GET /api/events streams
// (*webhook.Outbox).
type EventLog interface {
	// Published returns a channel closed at the next event; take it
	// before reading.
	Published() <-chan struct{}
	// Settle returns once the events published so far are committed.
	Settle(ctx context.Context) error
	LatestEventID(ctx context.Context) (int64, error)
	// EventBounds: the oldest id kept, the newest ever logged (see
	// webhook.Outbox.EventBounds).
	EventBounds(ctx context.Context) (oldest, newest int64, err error)
	EventsAfter(ctx context.Context, after int64, limit int) ([]webhook.Logged, error)
}

// eventStreamGap is the stream's own event: what it could not resume
// (streamGap). It is sent whatever ?events= asks for.
const eventStreamGap = "stream.gap"

// The stream's bounds.
const (
	// defaultHeartbeat is how often an idle stream sends a comment, so
	// that proxies keep it open and the client sees it alive.
	defaultHeartbeat = 15 * time.Second
	// streamPage bounds what a client holds in memory: the events read at
	// once from the log.
	streamPage = 256
	// defaultWriteTimeout cuts a client whose connection accepted nothing
	// for this long: a slow reader never holds the bridge, only its
	// stream, and resumes with Last-Event-ID.
	defaultWriteTimeout = 10 * time.Second
)

// streamQuery is what a request to GET /api/events asks for.
type streamQuery struct {
	types []string // empty: all
	after int64    // resume after this event id; -1: from now
	// caller is who streams: a key with an allowlist gets its chats'
	// events only.
	caller bridge.Caller
}

// parseStreamQuery reads ?events= (comma-separated types) and the
// Last-Event-ID header.
func parseStreamQuery(events string, lastEventID string) (streamQuery, error) {
	q := streamQuery{after: -1}
	if events != "" {
		for _, t := range strings.Split(events, ",") {
			if !slices.Contains(webhook.EventTypes, t) {
				return q, bridge.Invalid(bridge.CodeUnknownEventType, "unknown event type %q; the types are %s",
					bridge.Truncate(t, 64), strings.Join(webhook.EventTypes, ", "))
			}
			q.types = append(q.types, t)
		}
	}
	if lastEventID != "" {
		id, err := strconv.ParseInt(lastEventID, 10, 64)
		if err != nil || id < 0 {
			return q, bridge.Invalid(bridge.CodeInvalidLastEventID, "Last-Event-ID must be an event id this stream sent (a whole number)")
		}
		q.after = id
	}
	return q, nil
}

func (s *server) streamEvents(w http.ResponseWriter, r *http.Request) error {
	query, err := httpkit.StrictQuery(r, "events")
	if err != nil {
		return err
	}
	q, err := parseStreamQuery(query["events"], r.Header.Get("Last-Event-ID"))
	if err != nil {
		return err
	}
	q.caller = bridge.CallerOf(r.Context())
	release, err := s.streams.take(w, r)
	if err != nil {
		return err
	}
	defer release()
	ctx := r.Context()
	gap, err := s.resumePoint(ctx, &q)
	if err != nil {
		return bridge.Internal(bridge.CodeInternal, "could not read the event log", err)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: pass events at once
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w, rc: http.NewResponseController(w), q: q, heartbeat: s.heartbeat(), writeTimeout: s.writeTimeout()}
	if err := st.run(ctx, s.eventHub, gap); err != nil && ctx.Err() == nil {
		s.Log.V(1).Info("event stream ended", "reason", err.Error())
	}
	return nil // the status is sent: errors end the stream
}

// The reasons of a stream.gap event.
const (
	// gapSwept: the events after Last-Event-ID are older than the log's
	// window and were swept.
	gapSwept = "swept"
	// gapUnknownID: Last-Event-ID is above every id the log ever gave, as
	// after DATA_DIR was restored from a backup: the client's id is of
	// another log, and what it saw cannot be told apart.
	gapUnknownID = "unknown_id"
)

// streamGap is the data of the stream.gap event a stream sends first when
// it cannot resume exactly after Last-Event-ID: never a silent skip. The
// stream goes on from OldestID, every event the log keeps.
type streamGap struct {
	Reason      string `json:"reason"`
	LastEventID int64  `json:"last_event_id"`
	OldestID    int64  `json:"oldest_id"`
	NewestID    int64  `json:"newest_id"`
}

// resumePoint sets q.after where the stream starts: now without a
// Last-Event-ID, after it when the log holds what follows it, else at the
// oldest event kept, with the gap to tell the client (nil: none).
func (s *server) resumePoint(ctx context.Context, q *streamQuery) (*streamGap, error) {
	var err error
	if q.after < 0 {
		q.after, err = s.Events.Log.LatestEventID(ctx)
		return nil, err
	}
	oldest, newest, err := s.Events.Log.EventBounds(ctx)
	if err != nil {
		return nil, err
	}
	gap := &streamGap{LastEventID: q.after, OldestID: oldest, NewestID: newest}
	switch {
	case q.after > newest:
		gap.Reason = gapUnknownID
	case q.after < oldest-1:
		gap.Reason = gapSwept
	default:
		return nil, nil
	}
	q.after = oldest - 1
	return gap, nil
}

func (s *server) heartbeat() time.Duration {
	if s.Events.Heartbeat > 0 {
		return s.Events.Heartbeat
	}
	return defaultHeartbeat
}

func (s *server) writeTimeout() time.Duration {
	if s.Events.WriteTimeout > 0 {
		return s.Events.WriteTimeout
	}
	return defaultWriteTimeout
}

// stream is one client's stream.
type stream struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	q            streamQuery
	heartbeat    time.Duration
	writeTimeout time.Duration
}

var errSlowReader = errors.New("the client reads too slowly: cut, it resumes with Last-Event-ID")

// run sends gap, if any, then the events after q.after as they are
// logged until ctx ends or a write fails. It takes them from hub, which
// reads the log once for every stream, and reads the log itself only
// while it is further behind than the hub holds.
func (st *stream) run(ctx context.Context, hub *eventHub, gap *streamGap) error {
	leave := hub.join()
	defer leave()
	if err := st.start(gap); err != nil {
		return err
	}
	tick := time.NewTicker(st.heartbeat)
	defer tick.Stop()
	for {
		more, changed, err := st.next(ctx, hub)
		if err != nil {
			return err
		}
		if more {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-tick.C:
			if err := st.write(": heartbeat\n\n"); err != nil {
				return err
			}
		}
	}
}

// start writes the stream's first comment and its gap, if any.
func (st *stream) start(gap *streamGap) error {
	if err := st.write(": stream of msgbridge events\n\n"); err != nil {
		return err
	}
	if gap == nil {
		return nil
	}
	data, _ := json.Marshal(gap) // integers and a string: cannot fail
	// Its id is where the stream goes on: a client cut right after it
	// resumes from there, without a second gap.
	return st.write(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", st.q.after, eventStreamGap, data))
}

// next sends the next page after the stream's position, from the hub or,
// behind what it holds, from the log; more says another page may follow
// at once, else changed closes when the hub holds more.
func (st *stream) next(ctx context.Context, hub *eventHub) (more bool, changed <-chan struct{}, err error) {
	page, covered, changed := hub.since(st.q.after)
	if !covered {
		if page, err = hub.log.EventsAfter(ctx, st.q.after, streamPage); err != nil {
			return false, nil, err
		}
	}
	if err := st.send(page); err != nil {
		return false, nil, err
	}
	return len(page) == streamPage || (!covered && len(page) > 0), changed, nil
}

// send writes the events of page the client asked for.
func (st *stream) send(page []webhook.Logged) error {
	var b strings.Builder
	for _, ev := range page {
		st.q.after = ev.Seq
		if len(st.q.types) > 0 && !slices.Contains(st.q.types, ev.Type) || !eventAllowed(st.q.caller, ev) {
			continue
		}
		// The stored payload is compact JSON: one data line.
		fmt.Fprintf(&b, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, ev.Payload)
	}
	if b.Len() == 0 {
		return nil
	}
	return st.write(b.String())
}

func (st *stream) write(text string) error {
	if err := st.rc.SetWriteDeadline(time.Now().Add(st.writeTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if _, err := st.w.Write([]byte(text)); err != nil {
		return errSlowReader
	}
	return st.rc.Flush()
}
