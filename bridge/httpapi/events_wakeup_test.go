package httpapi

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// announcedLog is an event log whose one event was announced (from inside
// its transaction) before the stream took its wake-up channel, and is
// committed only when the stream settles, as the group commit does with
// an event whose batch is still running.
type announcedLog struct {
	mu        sync.Mutex
	committed bool
}

func (l *announcedLog) Published() <-chan struct{} { return nil } // the announcement is past

func (l *announcedLog) Settle(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.committed = true
	return nil
}

func (l *announcedLog) LatestEventID(context.Context) (int64, error) { return 0, nil }

func (l *announcedLog) EventBounds(context.Context) (oldest, newest int64, err error) {
	return 1, 1, nil
}

func (l *announcedLog) EventsAfter(_ context.Context, after int64, _ int) ([]webhook.Logged, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.committed || after >= 1 {
		return nil, nil
	}
	return []webhook.Logged{{Seq: 1, Stored: webhook.Stored{ID: "msg_1", Type: "session.status", Payload: []byte(`{}`)}}}, nil
}

// An event announced before the stream took its wake-up channel, but not
// yet committed when it first read the log, reaches the client at once,
// not at the next heartbeat (an hour here).
func TestEventAnnouncedBeforeItsCommitIsNotMissed(t *testing.T) {
	srv := newTestServer(t, testDeps{Events: &announcedLog{}, EventsHeartbeat: time.Hour, Messages: &fakeMessages{}})
	c := openStream(t, srv.URL+"/api/events", "")
	if ev := c.next(t); ev.id != "1" {
		t.Fatalf("got event %q, want 1", ev.id)
	}
}
