package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// Events per second from enqueue to a 2xx at every one of 1, 3 and 10
// webhook subscriptions (each its own loopback receiver); compare with
// BenchmarkDeliveryThroughput (WEBHOOK_URL alone) in the same run.
//
//	go test ./bridge/webhook -run '^$' -bench 'BenchmarkDeliveryThroughput|BenchmarkSubscriptionsThroughput' -benchtime 5000x
func BenchmarkSubscriptionsThroughput(b *testing.B) {
	for _, n := range []int{1, 3, 10} {
		b.Run("subscriptions="+strconv.Itoa(n), func(b *testing.B) {
			o := startOutbox(b, "", nil)
			receivers := make([]*receiver, n)
			for i := range receivers {
				receivers[i] = newReceiver(b, false)
				o.subscribe(b, "s"+strconv.Itoa(i), receivers[i].srv.URL)
			}
			b.ResetTimer()
			start := time.Now()
			enqueueMany(b, o, b.N)
			for _, r := range receivers {
				r.waitCount(b, int64(b.N), 10*time.Minute)
			}
			elapsed := time.Since(start).Seconds()
			b.ReportMetric(float64(b.N)/elapsed, "events/s")
			b.ReportMetric(float64(b.N*n)/elapsed, "deliveries/s")
		})
	}
}

// Events per second published to a real nats-server's JetStream stream,
// each counted once its PubAck came.
//
//	go test ./bridge/webhook -run '^$' -bench 'BenchmarkDeliveryThroughput|BenchmarkJetStreamThroughput' -benchtime 5000x
func BenchmarkJetStreamThroughput(b *testing.B) {
	ns := startNATS(b)
	ns.stream(b, "msgbridge")
	o := startOutbox(b, "", nil)
	o.subscribe(b, "bus", ns.url()+"/msgbridge")
	b.ResetTimer()
	start := time.Now()
	enqueueMany(b, o, b.N)
	o.waitDrained(b, 10*time.Minute)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// The latency of a live receiver's events, one at a time, beside another
// subscription: none (baseline), a healthy one (baseline: the cost of a
// second row per event and its delivery), one whose receiver hangs, every
// one of its slots held until the end and its backlog growing, or one
// whose receiver answers 503 at once with a backlog of 2,000 events in one
// chat (it takes message.upsert only, so that its cost is its backlog's).
//
//	go test ./bridge/webhook -run '^$' -bench BenchmarkLiveLatencyBesideDead -benchtime 1000x
func BenchmarkLiveLatencyBesideDead(b *testing.B) {
	for _, other := range []string{"none", "healthy", "hung", "failing"} {
		b.Run("other="+other, func(b *testing.B) {
			live := newReceiver(b, false)
			o := startOutbox(b, "", func(opt *Options) { opt.Timeout = time.Hour })
			o.subscribe(b, "live", live.srv.URL, TypeMessageStatus)
			switch other {
			case "healthy":
				o.subscribe(b, "other", newReceiver(b, false).srv.URL)
			case "hung":
				release := make(chan struct{})
				hang := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
				b.Cleanup(func() { close(release); hang.Close() })
				o.subscribe(b, "other", hang.URL)
			case "failing":
				down := newReceiver(b, false)
				down.answer.Store(http.StatusServiceUnavailable)
				o.subscribe(b, "other", down.srv.URL, TypeMessageUpsert)
				o.enqueue(b, chatBacklog(2000)...)
				testutil.Poll(b, 10*time.Second, func() (int64, bool) { n := down.hits.Load(); return n, n >= 1 }, "the head's attempt")
			}
			b.ResetTimer()
			lat := make([]time.Duration, 0, b.N)
			for i := range b.N {
				start := time.Now()
				ev := MessageStatus("L"+strconv.Itoa(i), testPhone, bridge.StatusSent, time.Now())
				if err := o.EnqueueNow(context.Background(), ev); err != nil {
					b.Fatal(err)
				}
				select {
				case <-live.arrived:
				case <-time.After(10 * time.Second):
					b.Fatal("event not delivered")
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
