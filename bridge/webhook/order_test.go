package webhook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Deliveries run in parallel across keys but never two at once for one
// key, and each key's events arrive in enqueue order.
func TestOneInFlightPerKey(t *testing.T) {
	const keys, perKey = 6, 8
	var (
		mu               sync.Mutex
		inflight         = map[string]int{}
		maxPerKey, total int
		maxTotal         int
		seq              = map[string][]string{}
		done             = make(chan struct{})
		count, began     int
		// changed wakes the deliveries held below: another one began, or
		// a key got its last event.
		changed = sync.NewCond(&mu)
	)
	// keysLeft counts the keys some of whose events are not delivered yet.
	keysLeft := func() int {
		n := keys
		for _, got := range seq {
			if len(got) == perKey {
				n--
			}
		}
		return n
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p messageStatusPayload
		_ = json.NewDecoder(r.Body).Decode(&p)
		mu.Lock()
		defer mu.Unlock()
		inflight[p.WhatsAppID]++
		total++
		maxPerKey, maxTotal = max(maxPerKey, inflight[p.WhatsAppID]), max(maxTotal, total)
		began++
		mine := began
		changed.Broadcast()
		// Each delivery stays in flight until the next one begins (or no
		// other key is left to deliver): the overlaps are certain, not timed.
		for began == mine && keysLeft() > 1 {
			changed.Wait()
		}
		inflight[p.WhatsAppID]--
		total--
		seq[p.WhatsAppID] = append(seq[p.WhatsAppID], p.Timestamp)
		changed.Broadcast()
		if count++; count == keys*perKey {
			close(done)
		}
	}))
	defer srv.Close()
	o := startOutbox(t, srv.URL, nil)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range perKey {
		for k := range keys {
			// Rank 0 so that nothing is dropped; the timestamp numbers the events.
			ev := MessageStatus("K"+strconv.Itoa(k), testPhone, bridge.StatusSent, base.Add(time.Duration(i)*time.Second))
			ev.Rank = 0
			o.enqueue(t, ev)
		}
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("not all delivered")
	}
	mu.Lock()
	defer mu.Unlock()
	if maxPerKey != 1 || maxTotal < 2 {
		t.Errorf("at most %d in flight per key (want 1), %d in all (want parallel)", maxPerKey, maxTotal)
	}
	for k, got := range seq {
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Errorf("%s arrived out of order: %v", k, got)
				break
			}
		}
	}
}
