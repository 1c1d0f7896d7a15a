package sendqueue

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// TestWorkerSkipsWhatARequestSentMeanwhile: the worker reads a batch of
// due rows, then attempts them one by one. A row of that batch whose
// request's immediate attempt was running (claimed) when the batch was read
// and ended while the worker was busy with an earlier row was sent already;
// attempting it from the stale copy sent it a second time with the same
// WhatsApp id (the contact got it twice, the log showed one attempt).
func TestWorkerSkipsWhatARequestSentMeanwhile(t *testing.T) {
	f := newFixture(t, time.Millisecond)
	var mu sync.Mutex
	clock := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	f.open(func(l *MessageLogOptions, _ *Options) {
		l.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	})
	bob, carol := bridge.PhoneRecipient("4915187654321"), bridge.PhoneRecipient("4915187654322")
	// A (alice) and C (carol) fail their immediate attempts and wait for a
	// retry; B's (bob) immediate attempt succeeds.
	f.sender.results = []error{errors.New("flaky"), nil, errors.New("flaky")}
	a := f.submit(textRequest("a")).Messages[0]

	inB, goB := make(chan struct{}), make(chan struct{})
	inA, goA := make(chan struct{}), make(chan struct{})
	var onceA, onceB sync.Once
	f.sender.mu.Lock()
	f.sender.during = func(out bridge.Outgoing) {
		switch out.Recipient {
		case bob:
			onceB.Do(func() { close(inB); <-goB })
		case alice:
			onceA.Do(func() { close(inA); <-goA })
		}
	}
	f.sender.mu.Unlock()

	advance(10 * time.Millisecond)
	bDone := make(chan bridge.Message)
	go func() {
		req := textRequest("b")
		req.Recipient = bob
		bDone <- f.submit(req).Messages[0]
	}()
	<-inB // B's request holds its claim, attempting
	advance(10 * time.Millisecond)
	reqC := textRequest("c")
	reqC.Recipient = carol
	c := f.submit(reqC).Messages[0]
	advance(10 * time.Millisecond)

	f.run() // reads A, B (claimed) and C, in that order; holds at A
	<-inA
	close(goB)
	b := <-bDone // B sent and released before the worker moves on
	if b.Status != bridge.StatusSent {
		t.Fatalf("B after its request: %+v", b)
	}
	close(goA)
	f.waitStatus(a.ID, bridge.StatusSent)
	f.waitStatus(c.ID, bridge.StatusSent) // the worker is past B
	var toBob int
	for _, call := range f.sender.calls() {
		if call.out.Recipient == bob {
			toBob++
		}
	}
	if toBob != 1 {
		t.Errorf("B was sent %d times, want once", toBob)
	}
}
