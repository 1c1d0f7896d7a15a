package whatsapp

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/internal/testutil"
)

// burstOverflow is how many messages of a burst go past whatsmeow's handler
// queue (2,048 nodes) while the handler holds the first one.
const burstOverflow = 300

// A contact sends more messages than whatsmeow's handler queue holds while
// the bridge's handler is busy with the first (a slow disk). Unpatched,
// whatsmeow handed each node that found the queue full to a goroutine of its
// own ("Handler queue is full, message ordering is no longer guaranteed"):
// one goroutine per waiting message, and the messages reached the handler in
// whatever order those goroutines ran. With HandlerQueueBackpressure the
// socket reader waits for room instead, so the server's sending slows down:
// no goroutine per message, and every message reaches the handler in the
// order the contact sent it.
func TestIncomingBurstKeepsOrderAndBoundsGoroutines(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 2,300 messages through the simulator")
	}
	sim, r, alice := linked(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	to := sim.Phone(account).JID()
	first, err := alice.SendText(ctx, to, "first")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first message", func() bool { return len(r.events.received()[first]) == 1 })

	release := make(chan struct{})
	held := r.events.hold(release)
	n := 2048 + burstOverflow
	ids := make([]string, n)
	var sent atomic.Int64
	sendErr := make(chan error, 1)
	go func() {
		for i := range ids {
			id, err := alice.SendText(ctx, to, fmt.Sprintf("burst %d", i))
			if err != nil {
				sendErr <- err
				return
			}
			ids[i] = id
			sent.Add(1)
		}
		sendErr <- nil
	}()
	<-held // the handler is busy with the burst's first message
	base := runtime.NumGoroutine()
	peak := base
	// The burst fills the handler queue and the socket's buffers; once the
	// queue is full, unpatched whatsmeow grows a goroutine per message.
	waitFor(t, "the burst past the handler queue", func() bool {
		peak = max(peak, runtime.NumGoroutine())
		return sent.Load() == int64(n) || peak-base > burstOverflow/2
	})
	r.events.unhold()
	close(release)
	if err := <-sendErr; err != nil {
		t.Fatal(err)
	}
	if peak-base > burstOverflow/2 {
		t.Errorf("goroutines grew from %d to %d while the handler was busy", base, peak)
	}
	// 2,300 messages through the race detector, beside other packages' tests,
	// take their time (35 s alone, over 90 s in a whole run).
	testutil.Eventually(t, 4*time.Minute, func() bool { return len(r.events.received()) == n+1 }, "the whole burst")
	assertOrder(t, r.events, ids)
}

// assertOrder fails unless the port received ids in this order (each once).
func assertOrder(t *testing.T, f *fakeEvents, ids []string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	place := make(map[string]int, len(ids))
	for i, id := range ids {
		place[id] = i
	}
	last, outOfOrder := -1, 0
	for _, in := range f.incoming {
		i, ok := place[in.WhatsAppID]
		if !ok {
			continue
		}
		if i < last {
			outOfOrder++
		}
		last = max(last, i)
	}
	if outOfOrder > 0 {
		t.Errorf("%d of %d messages reached the handler after a later one", outOfOrder, len(ids))
	}
}
