package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// countingLog counts the reads of the event log its streams make.
type countingLog struct {
	EventLog
	reads atomic.Int64
}

func (l *countingLog) EventsAfter(ctx context.Context, after int64, limit int) ([]webhook.Logged, error) {
	l.reads.Add(1)
	return l.EventLog.EventsAfter(ctx, after, limit)
}

// The open streams share one reader of the log (a fan-out): 20 streams
// and 10 events read the log a few times per event, not once per stream
// and event.
func TestEventStreamsShareOneReadOfTheLog(t *testing.T) {
	e := newSubsEnv(t)
	log := &countingLog{EventLog: e.outbox}
	srv := newTestServer(t, testDeps{Events: log, Messages: &fakeMessages{}, EventStreams: 20, EventStreamsPerAddress: 20})
	const streams, events = 20, 10
	clients := make([]*sseClient, streams)
	for i := range clients {
		clients[i] = openStream(t, srv.URL+"/api/events", "")
	}
	before := log.reads.Load()
	for i := range events {
		e.emit(t, 1, i)
		for _, c := range clients {
			c.next(t)
		}
	}
	if reads := log.reads.Load() - before; reads > 3*events {
		t.Errorf("%d streams read the log %d times for %d events; one reader would read it about %d times", streams, reads, events, events)
	}
}

// The cost of many open streams: goroutines, heap and CPU time while
// SSE_COST_STREAMS streams (1000 in the README's figure) receive 100
// events. Run by hand: SSE_COST_STREAMS=1000 go test ./bridge/httpapi
// -run TestEventStreamsCost -v.
func TestEventStreamsCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SSE_COST_STREAMS"))
	if n == 0 {
		t.Skip("SSE_COST_STREAMS unset: a measurement, not a check")
	}
	e := newSubsEnv(t)
	srv := newTestServer(t, testDeps{Events: e.outbox, Messages: &fakeMessages{}, EventStreams: n, EventStreamsPerAddress: n})
	goroutines := runtime.NumGoroutine()
	clients := make([]*sseClient, n)
	for i := range clients {
		clients[i] = openStream(t, srv.URL+"/api/events", "")
	}
	cpu := cpuTime()
	start := time.Now()
	const events = 100
	for i := range events {
		e.emit(t, 1, i)
	}
	for _, c := range clients {
		for range events {
			c.next(t)
		}
	}
	elapsed, used := time.Since(start), cpuTime()-cpu
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	t.Logf("%d streams, %d events: %d goroutines (%d before the streams; the clients' included), heap in use %.1f MiB, "+
		"CPU %s in %s (clients included)", n, events, runtime.NumGoroutine(), goroutines, float64(m.HeapInuse)/(1<<20), used, elapsed)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Streams are capped in all and per client address: beyond either, 429
// too_many_streams with a Retry-After, and a stream that ends frees its
// slot.
func TestEventStreamsAreCapped(t *testing.T) {
	e := newSubsEnv(t)
	srv := newTestServer(t, testDeps{Events: e.outbox, Messages: &fakeMessages{}, EventStreams: 3, EventStreamsPerAddress: 2,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	// open opens a stream from address from; an open one stays open until
	// its close is called or the test ends.
	type answer struct {
		status      int
		code, retry string
		close       func()
	}
	open := func(from string) answer {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/events", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Api-Key", testAPIKey)
		req.Header.Set("X-Forwarded-For", from)
		resp, err := http.DefaultClient.Do(req) //nolint:bodyclose // closed by close, at the test's end or when the test frees a slot
		if err != nil {
			t.Fatal(err)
		}
		a := answer{status: resp.StatusCode, retry: resp.Header.Get("Retry-After"), close: func() { _ = resp.Body.Close() }}
		t.Cleanup(a.close)
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			a.code = errorCode(t, string(body))
		}
		return a
	}
	first := open("10.0.0.1")
	open("10.0.0.1")
	if a := open("10.0.0.1"); a.status != http.StatusTooManyRequests || a.code != "too_many_streams" || a.retry == "" {
		t.Errorf("a third stream from one address: %d %q, Retry-After %q", a.status, a.code, a.retry)
	}
	open("10.0.0.2")
	if a := open("10.0.0.3"); a.status != http.StatusTooManyRequests || a.code != "too_many_streams" {
		t.Errorf("a fourth stream in all: %d %q", a.status, a.code)
	}
	first.close()
	testutil.Poll(t, 10*time.Second, func() (int, bool) {
		a := open("10.0.0.3")
		return a.status, a.status == http.StatusOK
	}, "a slot freed by a closed stream")
}
