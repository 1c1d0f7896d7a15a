package process

import (
	"math"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// BenchmarkSendRate: 60 texts accepted at once to one contact, through the
// bridge process, whatsmeow and the simulator, for several SEND_RATE
// settings; the baseline in the same run is 100000/s, which is no pacing
// at all (one attempt every 10 µs). It reports the achieved rate at the
// contact's phone and the gaps between the server's receive times.
//
//	go test -run=NONE -bench=SendRate -benchtime=1x ./test/process
func BenchmarkSendRate(b *testing.B) {
	for _, rate := range []string{"100000/s", "200/s", "50/s", "10/s"} {
		b.Run(rate, func(b *testing.B) {
			const n = 60
			sim := wasim.Start(b)
			dataDir := linkedDataDir(b, sim)
			contact := sim.Contact(alice, "Alice")
			contact.SetReceiptMode(wasim.ReceiptsNone)
			p := startBridge(b, simBridgeBin, append(simEnv(sim, dataDir), "SEND_RATE="+rate))
			waitConnected(b, p)
			for range b.N {
				before := len(contact.Received())
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						req := textRequest("http://" + p.addr + "/send")()
						resp, err := http.DefaultClient.Do(req)
						if err != nil || (resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted) {
							b.Errorf("send %d: %v %v", i, err, resp)
						}
						if resp != nil {
							_ = resp.Body.Close()
						}
					})
				}
				wg.Wait()
				testutil.Eventually(b, 60*time.Second, func() bool { return len(contact.Received()) >= before+n }, "not all received")
				reportGaps(b, contact.Received()[before:before+n])
			}
		})
	}
}

func reportGaps(b *testing.B, msgs []*wasim.Message) {
	gaps := make([]float64, 0, len(msgs)-1)
	minGap := math.Inf(1)
	var sum float64
	for i := 1; i < len(msgs); i++ {
		g := msgs[i].Timestamp.Sub(msgs[i-1].Timestamp).Seconds() * 1000
		gaps = append(gaps, g)
		sum += g
		minGap = math.Min(minGap, g)
	}
	mean := sum / float64(len(gaps))
	var sq float64
	for _, g := range gaps {
		sq += (g - mean) * (g - mean)
	}
	span := msgs[len(msgs)-1].Timestamp.Sub(msgs[0].Timestamp).Seconds()
	b.ReportMetric(float64(len(msgs)-1)/span, "msg/s")
	b.ReportMetric(mean, "gap-mean-ms")
	b.ReportMetric(math.Sqrt(sq/float64(len(gaps))), "gap-sd-ms")
	b.ReportMetric(minGap, "gap-min-ms")
	b.ReportMetric(0, "ns/op")
}
