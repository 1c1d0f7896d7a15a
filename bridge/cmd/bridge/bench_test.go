package main

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
	dataDir := b.TempDir()
	p := startBridge(b, simBridgeBin, simEnv(sim, dataDir))
	wasimtest.LinkBridge(b, sim.Phone(testAccount), "http://"+p.addr, testAdminToken)
	waitConnected(b, p)
	p.kill()
	return dataDir
}

// waitConnected polls /session/status until it says connected; the poll
// interval (testutil.PollInterval) bounds the restart figure's resolution.
func waitConnected(b *testing.B, p *bridgeProcess) {
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
//	go test -run=NONE -bench=RestartToConnected -benchtime=10x ./bridge/cmd/bridge
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

// BenchmarkIdleRSS: resident memory of an idle, linked bridge process after
// it settled, next to the same binary idle and unlinked.
//
//	go test -run=NONE -bench=IdleRSS -benchtime=1x ./bridge/cmd/bridge
func BenchmarkIdleRSS(b *testing.B) {
	sim := wasim.Start(b)
	linked := linkedDataDir(b, sim)
	const settle = 5 * time.Second // prekey upload and first heartbeats done
	var linkedKB, unlinkedKB int
	for range b.N {
		p := startBridge(b, simBridgeBin, simEnv(sim, linked))
		waitConnected(b, p)
		time.Sleep(settle)
		linkedKB += rssKB(b, p.cmd.Process.Pid)
		p.kill()

		q := startBridge(b, simBridgeBin, simEnv(sim, b.TempDir()))
		time.Sleep(settle)
		unlinkedKB += rssKB(b, q.cmd.Process.Pid)
		q.kill()
	}
	b.ReportMetric(float64(linkedKB)/1024/float64(b.N), "MB-rss-linked")
	b.ReportMetric(float64(unlinkedKB)/1024/float64(b.N), "MB-rss-unlinked")
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
