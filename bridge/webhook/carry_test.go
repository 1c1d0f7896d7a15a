package webhook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// A chat's next event is sent once the receiver accepted the one before,
// without waiting for that one's mark to commit: bridge.db's writer is
// shared with every incoming message, and one commit per event held a busy
// chat (a group) to the writer's commit rate. Here the writer's commits
// are held after the first delivery: the chat's other events still arrive,
// in order, and each is marked delivered once the commits go on.
func TestAChatsNextEventDoesNotWaitForTheMark(t *testing.T) {
	const events = 4
	var (
		mu      sync.Mutex
		arrived []string
		got     = make(chan struct{}, events*2)
		held    atomic.Bool
		release = make(chan struct{})
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p messageStatusPayload
		_ = json.NewDecoder(r.Body).Decode(&p)
		held.Store(true) // every commit from now on waits
		mu.Lock()
		arrived = append(arrived, p.Timestamp)
		mu.Unlock()
		got <- struct{}{}
	}))
	defer srv.Close()
	o := openOutbox(t, srv.URL, func(opts *Options) {
		marks := sqlite.NewBatcher(opts.DB, sqlite.AfterCommit(func() {
			if held.Load() {
				<-release
			}
		}))
		t.Cleanup(marks.Close)
		opts.Batcher = marks
	})
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range events {
		ev := MessageStatus("K1", testPhone, bridge.StatusSent, base.Add(time.Duration(i)*time.Second))
		ev.Rank = 0
		o.enqueue(t, ev)
	}
	o.run(t)
	for i := range events {
		select {
		case <-got:
		case <-time.After(20 * time.Second):
			close(release)
			t.Fatalf("%d of the chat's %d events arrived while the first one's mark was not committed", i, events)
		}
	}
	close(release)
	o.waitDrained(t, 20*time.Second)
	mu.Lock()
	defer mu.Unlock()
	for i, ts := range arrived {
		if want := bridge.FormatTime(base.Add(time.Duration(i) * time.Second)); ts != want {
			t.Fatalf("arrivals %v: event %d is %s, want %s (in order, once each)", arrived, i, ts, want)
		}
	}
	if len(arrived) != events {
		t.Fatalf("%d arrivals, want %d", len(arrived), events)
	}
}
