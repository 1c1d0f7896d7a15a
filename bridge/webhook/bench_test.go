package webhook

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// enqueueMany stores n message.status events of distinct messages, in
// transactions of 500 (as group commit would batch concurrent changes).
func enqueueMany(tb testing.TB, o testOutbox, n int) {
	tb.Helper()
	for start := 0; start < n; start += 500 {
		evs := make([]Event, 0, 500)
		for i := start; i < min(start+500, n); i++ {
			evs = append(evs, MessageStatus("WID"+strconv.Itoa(i), testPhone, bridge.StatusSent, time.Now()))
		}
		o.enqueue(tb, evs...)
	}
}

// Events per second from enqueue to a 2xx of a loopback receiver.
//
//	go test ./bridge/webhook -run '^$' -bench BenchmarkDeliveryThroughput -benchtime 20000x
func BenchmarkDeliveryThroughput(b *testing.B) {
	r := newReceiver(b, false)
	o := startOutbox(b, r.srv.URL, nil)
	b.ResetTimer()
	start := time.Now()
	enqueueMany(b, o, b.N)
	r.waitCount(b, int64(b.N), 10*time.Minute)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// Latency from Enqueue (one event, committed on its own) to its arrival,
// with the outbox otherwise idle.
//
//	go test ./bridge/webhook -run '^$' -bench BenchmarkIdleLatency -benchtime 500x
func BenchmarkIdleLatency(b *testing.B) {
	r := newReceiver(b, false)
	o := startOutbox(b, r.srv.URL, nil)
	lat := make([]time.Duration, 0, b.N)
	for i := range b.N {
		time.Sleep(2 * time.Millisecond) // idle between events
		start := time.Now()
		if err := o.EnqueueNow(context.Background(), MessageStatus("L"+strconv.Itoa(i), testPhone, bridge.StatusSent, time.Now())); err != nil {
			b.Fatal(err)
		}
		select {
		case <-r.arrived:
		case <-time.After(10 * time.Second):
			b.Fatal("event not delivered")
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// A backlog of 100,000 events on disk drains with bounded memory: the
// worker holds one page of rows, never the backlog.
//
//	go test ./bridge/webhook -run '^$' -bench BenchmarkBacklogDrain -benchtime 1x
func BenchmarkBacklogDrain(b *testing.B) {
	const backlog = 100_000
	for range b.N {
		r := newReceiver(b, false)
		o := openOutbox(b, r.srv.URL, nil)
		enqueueMany(b, o, backlog)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap0, rss0 := ms.HeapInuse, rssBytes()
		var heapMax, rssMax uint64
		done := make(chan struct{})
		go func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(20 * time.Millisecond):
				}
				runtime.ReadMemStats(&ms)
				heapMax, rssMax = max(heapMax, ms.HeapInuse), max(rssMax, rssBytes())
			}
		}()
		start := time.Now()
		o.run(b)
		r.waitCount(b, backlog, 10*time.Minute)
		close(done)
		elapsed := time.Since(start)
		b.ReportMetric(float64(backlog)/elapsed.Seconds(), "events/s")
		b.ReportMetric(float64(int64(heapMax)-int64(heap0))/(1<<20), "heap-growth-MB")
		b.ReportMetric(float64(int64(rssMax)-int64(rss0))/(1<<20), "rss-growth-MB")
		o.waitDrained(b, time.Minute)
	}
}

// rssBytes is the process's resident set (Linux), 0 elsewhere.
func rssBytes() uint64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb uint64
			_, _ = fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb)
			return kb << 10
		}
	}
	return 0
}
