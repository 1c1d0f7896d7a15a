package process

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// BenchmarkIncomingBurst: b.N texts from 4 contacts of the simulator at
// once (each contact's in a row) to a bridge process, through its whole
// incoming path to a loopback webhook receiver. It reports the rate at
// which they reached the webhook ("msg/s") next to the rate at which the
// simulator sent them ("sim-msg/s"), the peak of the bridge's goroutines
// while they came in (go_goroutines on /metrics, polled), the bridge's
// CPU time per message ("bridge-cpu-µs/msg"), its peak resident memory
// ("peak-MB"), the out-of-order pairs: messages that reached the webhook
// after a later one of the same chat (must be 0), and
// the session.status events that said disconnected (a keepalive unanswered
// while the burst came in). With hack/perf-baseline.sh the bridge of
// another commit runs the same burst in the same run.
//
//	go test -run=NONE -bench=IncomingBurst -benchtime=5000x ./test/process
//	hack/perf-baseline.sh main IncomingBurst -benchtime=5000x
func BenchmarkIncomingBurst(b *testing.B) {
	skipProcessTest(b)
	for _, c := range candidates(simBridgeBin, envBaselineSimBin) {
		b.Run(c.name, func(b *testing.B) {
			sim := wasim.Start(b)
			dataDir := linkedDataDirOf(b, sim, c.bin)
			hooks := newArrivals(b)
			env := append(simEnv(sim, dataDir), "WEBHOOK_URL="+hooks.srv.URL, "WEBHOOK_SECRET="+testWebhookSecret)
			if os.Getenv(envBurstProfile) != "" {
				env = append(env, "PPROF=on") // as shipped otherwise: PPROF samples the heap
			}
			p := startBridge(b, c.bin, env)
			waitConnected(b, p)
			to := types.NewJID(testAccount, types.DefaultUserServer)
			contacts := make([]*wasim.User, incomingContacts)
			for i := range contacts {
				contacts[i] = sim.Contact(fmt.Sprintf("49151000020%02d", i), "Contact")
				hooks.wait(b, []string{sendB(b, contacts[i], to, "warm-up")}) // sessions set up
			}
			peak := watchGoroutines(b, "http://"+p.addr+"/metrics")
			profiled := profileBurst(b, p, c.name)
			b.ResetTimer()
			cpu0 := processCPU(b, p.cmd.Process.Pid)
			ids := throughput(b, hooks, contacts, to)
			cpu := processCPU(b, p.cmd.Process.Pid) - cpu0
			profiled()
			b.StopTimer()
			// The bridge's CPU time per message, user and system: what the
			// burst costs it, which a shared machine's load moves far less
			// than the rate.
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "bridge-cpu-µs/msg")
			b.ReportMetric(float64(peak()), "peak-goroutines")
			// The process's high-water mark of resident memory (VmHWM), the
			// whole run: the burst must not raise it with its size.
			b.ReportMetric(float64(peakRSSKB(b, p.cmd.Process.Pid))/1024, "peak-MB")
			b.ReportMetric(float64(hooks.outOfOrder(ids)), "out-of-order")
			hooks.mu.Lock()
			b.ReportMetric(float64(hooks.drops), "disconnects")
			hooks.mu.Unlock()
		})
	}
}

// envBurstProfile names a directory: the burst benchmarks then write the
// bridge's CPU profile of the burst's first seconds there, one file per
// candidate (NAME.pprof, for go tool pprof with the binary).
const envBurstProfile = "BURST_PROFILE_DIR"

// profileBurst starts the bridge's CPU profile (PPROF=on) when
// envBurstProfile is set; the returned function waits for it to be written.
func profileBurst(b *testing.B, p *bridgeProcess, name string) func() {
	dir := os.Getenv(envBurstProfile)
	if dir == "" {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Go(func() { saveProfile(b, p, "profile?seconds=8", filepath.Join(dir, name+".pprof")) })
	wg.Go(func() {
		time.Sleep(4 * time.Second) // into the burst: where its goroutines wait
		saveProfile(b, p, "goroutine?debug=1", filepath.Join(dir, name+".goroutines.txt"))
	})
	return wg.Wait
}

// saveProfile writes the bridge's /debug/pprof/ profile to path.
func saveProfile(b *testing.B, p *bridgeProcess, profile, path string) {
	req, _ := http.NewRequest(http.MethodGet, "http://"+p.addr+"/debug/pprof/"+profile, nil)
	req.Header.Set("X-Admin-Token", testAdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := os.Create(path) //nolint:gosec // the benchmark's own output
	if err == nil {
		_, err = io.Copy(out, resp.Body)
		err = errors.Join(err, out.Close())
	}
	if err != nil {
		b.Error(err)
	}
}

// watchGoroutines polls the bridge's goroutine count until the benchmark
// ends; the returned function stops the polling and gives the peak.
func watchGoroutines(b *testing.B, metricsURL string) func() int {
	b.Helper()
	stop, done := make(chan struct{}), make(chan int, 1)
	go func() {
		peak := 0
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, goroutinesOf(metricsURL))
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	var peak int
	return func() int {
		once.Do(func() { close(stop); peak = <-done })
		return peak
	}
}

// goroutinesOf reads go_goroutines from a /metrics page; 0 when it cannot.
func goroutinesOf(url string) int { return gaugeOf(url, "go_goroutines") }

// gaugeOf reads the unlabelled metric name from a /metrics page; 0 when it
// cannot.
func gaugeOf(url, name string) int {
	resp, err := http.Get(url) //nolint:gosec,noctx // the bridge under test, on loopback
	if err != nil {
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return int(n)
		}
	}
	return 0
}
