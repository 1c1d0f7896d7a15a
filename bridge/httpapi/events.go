package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
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
	EventsAfter(ctx context.Context, after int64, limit int) ([]webhook.Logged, error)
}

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
	query, err := strictQuery(r, "events")
	if err != nil {
		return err
	}
	q, err := parseStreamQuery(query["events"], r.Header.Get("Last-Event-ID"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	if q.after < 0 {
		if q.after, err = s.Events.LatestEventID(ctx); err != nil {
			return bridge.Internal(bridge.CodeInternal, "could not read the event log", err)
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: pass events at once
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w, rc: http.NewResponseController(w), q: q, heartbeat: s.heartbeat(), writeTimeout: s.writeTimeout()}
	if err := st.run(ctx, s.Events); err != nil && ctx.Err() == nil {
		s.Log.V(1).Info("event stream ended", "reason", err.Error())
	}
	return nil // the status is sent: errors end the stream
}

func (s *server) heartbeat() time.Duration {
	if s.EventsHeartbeat > 0 {
		return s.EventsHeartbeat
	}
	return defaultHeartbeat
}

func (s *server) writeTimeout() time.Duration {
	if s.EventsWriteTimeout > 0 {
		return s.EventsWriteTimeout
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

// run sends the events after q.after as they are logged until ctx ends or
// a write fails.
func (st *stream) run(ctx context.Context, log EventLog) error {
	if err := st.write(": stream of msgbridge events\n\n"); err != nil {
		return err
	}
	tick := time.NewTicker(st.heartbeat)
	defer tick.Stop()
	for {
		// An event is announced from inside its transaction, before its
		// commit: one announced just before next was taken may not be
		// readable yet, and next will not announce it again. Settle waits
		// for that commit, so the read below sees every event announced
		// before next (reading first lost the wake-up until a heartbeat).
		next := log.Published()
		if err := log.Settle(ctx); err != nil {
			return err
		}
		page, err := log.EventsAfter(ctx, st.q.after, streamPage)
		if err != nil {
			return err
		}
		if err := st.send(page); err != nil {
			return err
		}
		if len(page) == streamPage {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-next:
		case <-tick.C:
			if err := st.write(": heartbeat\n\n"); err != nil {
				return err
			}
		}
	}
}

// send writes the events of page the client asked for.
func (st *stream) send(page []webhook.Logged) error {
	var b strings.Builder
	for _, ev := range page {
		st.q.after = ev.Seq
		if len(st.q.types) > 0 && !slices.Contains(st.q.types, ev.Type) {
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
