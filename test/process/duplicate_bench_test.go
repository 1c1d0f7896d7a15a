package process

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// BenchmarkDuplicateSends: b.N texts through POST /send from 8 concurrent
// clients to 4 contacts of the simulator, each sent by its request's
// immediate attempt or by the retry worker; it reports how many reached a
// contact more than once with the same WhatsApp id ("dups", must be 0).
//
//	go test -run=NONE -bench=DuplicateSends -benchtime=10000x ./test/process
func BenchmarkDuplicateSends(b *testing.B) {
	const clients = 8
	sim := wasim.Start(b)
	dataDir := linkedDataDir(b, sim)
	contacts := make([]*wasim.User, 4)
	for i := range contacts {
		contacts[i] = sim.Contact(fmt.Sprintf("49151000001%02d", i), fmt.Sprintf("Contact %d", i))
		contacts[i].SetReceiptMode(wasim.ReceiptsNone)
	}
	p := startBridge(b, simBridgeBin, simEnv(sim, dataDir))
	waitConnected(b, p)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
				if !postText(hc, "http://"+p.addr+"/send", contacts[i%int64(len(contacts))].JID().User, fmt.Sprintf("text %d", i)) {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d sends were not accepted", n, b.N)
	}
	testutil.Eventually(b, 5*time.Minute, func() bool { return distinctReceived(contacts) >= b.N },
		"not every text reached its contact")
	elapsed := time.Since(start)
	b.StopTimer()
	received := 0
	for _, c := range contacts {
		received += len(c.Received())
	}
	b.ReportMetric(float64(received-distinctReceived(contacts)), "dups")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msg/s")
	b.ReportMetric(0, "ns/op")
}

// postText sends one text by POST /send and reports whether it was
// accepted (200 sent, or 202 queued for the worker).
func postText(hc *http.Client, url, number, text string) bool {
	ct, body := multipartBodyB(number, text)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("X-Api-Key", testAPIKey)
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted
}

// distinctReceived counts the distinct message ids the contacts received.
func distinctReceived(contacts []*wasim.User) int {
	n := 0
	for _, c := range contacts {
		seen := map[string]bool{}
		for _, m := range c.Received() {
			seen[m.ID] = true
		}
		n += len(seen)
	}
	return n
}
