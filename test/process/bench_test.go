package process

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// linkedDataDir returns a DATA_DIR whose credentials are linked to the
// simulator's account, left by a bridge process that then stopped.
func linkedDataDir(b *testing.B, sim *wasim.Simulator) string {
	b.Helper()
	return linkedDataDirOf(b, sim, simBridgeBin)
}

// linkedDataDirOf is linkedDataDir with the bridge binary bin.
func linkedDataDirOf(b *testing.B, sim *wasim.Simulator, bin string) string {
	b.Helper()
	dataDir := b.TempDir()
	p := startBridge(b, bin, simEnv(sim, dataDir))
	wasimtest.LinkBridge(b, sim.Phone(testAccount), "http://"+p.addr, testAdminToken)
	waitConnected(b, p)
	p.kill()
	return dataDir
}

// waitConnected polls /session/status until it says connected; the poll
// interval (testutil.PollInterval) bounds the restart figure's resolution.
func waitConnected(b testing.TB, p *bridgeProcess) {
	b.Helper()
	testutil.Eventually(b, 30*time.Second, func() bool {
		var status struct{ Connected bool }
		request(b, http.MethodGet, "http://"+p.addr+"/session/status", "", "", "", &status)
		return status.Connected
	}, "not connected")
}

// BenchmarkRestartToConnected: a bridge process with stored credentials,
// from exec to connected, against the simulator. The baseline in the same
// run is exec to listening (settings, DATA_DIR, databases, HTTP), so the
// difference is the WhatsApp reconnect itself.
//
//	go test -run=NONE -bench=RestartToConnected -benchtime=10x ./test/process
func BenchmarkRestartToConnected(b *testing.B) {
	sim := wasim.Start(b)
	dataDir := linkedDataDir(b, sim)
	var listen, connect time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		p := startBridge(b, simBridgeBin, simEnv(sim, dataDir))
		listen += time.Since(start)
		waitConnected(b, p)
		connect += time.Since(start)
		b.StopTimer()
		p.kill()
		b.StartTimer()
	}
	b.ReportMetric(float64(listen.Milliseconds())/float64(b.N), "ms-to-listening")
	b.ReportMetric(float64(connect.Milliseconds())/float64(b.N), "ms-to-connected")
}

// BenchmarkIdleRSS: resident memory of an idle bridge process after it
// settled, linked to the simulator and unlinked, split into anonymous and
// file-backed pages (/proc/<pid>/smaps_rollup), next to the baseline's
// binary (BASELINE_SIM_BRIDGE_BIN) in the same run when given; and the CPU
// time each used while it settled (ms-cpu-idle-*), what idle work costs.
// One reading depends on what ran just before it (a garbage collection maps
// MiBs of tables again); the *-mean-* figures average 12 readings over the
// second half of the settle.
//
//	go test -run=NONE -bench=IdleRSS -benchtime=3x ./test/process
//	hack/perf-baseline.sh main IdleRSS -benchtime=3x
//	IDLE_SETTLE=2m hack/perf-baseline.sh main IdleRSS -benchtime=1x  # steady state
func BenchmarkIdleRSS(b *testing.B) {
	sim := wasim.Start(b)
	settle := 10 * time.Second // prekey upload, first heartbeats, GC cycles done
	if d, err := time.ParseDuration(os.Getenv("IDLE_SETTLE")); err == nil {
		settle = d // e.g. 2m: after the periodic jobs' first rounds
	}
	for _, c := range candidates(simBridgeBin, envBaselineSimBin) {
		linked := linkedDataDirOf(b, sim, c.bin)
		var linkedMem, unlinkedMem smapsRollup
		var linkedMean, unlinkedMean smapsRollup // over the settle's second half
		var linkedCPU, unlinkedCPU time.Duration // used while idle
		for range b.N {
			p := startBridge(b, c.bin, simEnv(sim, linked))
			waitConnected(b, p)
			cpu := processCPU(b, p.cmd.Process.Pid)
			linkedMean = linkedMean.add(settleSampling(b, p.cmd.Process.Pid, settle))
			linkedCPU += processCPU(b, p.cmd.Process.Pid) - cpu
			linkedMem = linkedMem.add(readSmapsRollup(b, p.cmd.Process.Pid))
			p.kill()

			q := startBridge(b, c.bin, simEnv(sim, b.TempDir()))
			cpu = processCPU(b, q.cmd.Process.Pid)
			unlinkedMean = unlinkedMean.add(settleSampling(b, q.cmd.Process.Pid, settle))
			unlinkedCPU += processCPU(b, q.cmd.Process.Pid) - cpu
			unlinkedMem = unlinkedMem.add(readSmapsRollup(b, q.cmd.Process.Pid))
			q.kill()
		}
		linkedMem.report(b, b.N, "linked-"+c.name)
		unlinkedMem.report(b, b.N, "unlinked-"+c.name)
		linkedMean.report(b, b.N, "mean-linked-"+c.name)
		unlinkedMean.report(b, b.N, "mean-unlinked-"+c.name)
		b.ReportMetric(ms(linkedCPU)/float64(b.N), "ms-cpu-idle-linked-"+c.name)
		b.ReportMetric(ms(unlinkedCPU)/float64(b.N), "ms-cpu-idle-unlinked-"+c.name)
	}
	b.ReportMetric(0, "ns/op")
}

// meanSamples is how many readings settleSampling averages.
const meanSamples = 12

// settleSampling waits settle and returns the mean of meanSamples readings
// of pid's smaps_rollup taken evenly over its second half.
func settleSampling(b *testing.B, pid int, settle time.Duration) smapsRollup {
	b.Helper()
	time.Sleep(settle / 2)
	var sum smapsRollup
	for range meanSamples {
		time.Sleep(settle / 2 / meanSamples)
		sum = sum.add(readSmapsRollup(b, pid))
	}
	return smapsRollup{sum.rss / meanSamples, sum.anon / meanSamples, sum.file / meanSamples}
}

func rssKB(b *testing.B, pid int) int { return procStatusKB(b, pid, "VmRSS:") }

// peakRSSKB is the process's high-water mark of resident memory.
func peakRSSKB(b *testing.B, pid int) int { return procStatusKB(b, pid, "VmHWM:") }

func procStatusKB(b *testing.B, pid int, field string) int {
	b.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				b.Fatal(err)
			}
			return kb
		}
	}
	b.Fatal("no " + field)
	return 0
}
