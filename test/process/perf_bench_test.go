package process

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The figures of issue 33 next to a baseline in the same run: a bridge
// built from another commit (hack/perf-baseline.sh builds it and sets
// these). Without them, each benchmark measures this tree alone.
const (
	envBaselineBin    = "BASELINE_BRIDGE_BIN"
	envBaselineSimBin = "BASELINE_SIM_BRIDGE_BIN"
	// envPeerWuzapiBin is wuzapi (github.com/asternic/wuzapi, the leanest
	// peer gateway on whatsmeow), built from its source with the same
	// flags as ours; its start-up is measured beside ours when given.
	envPeerWuzapiBin = "PEER_WUZAPI_BIN"
)

// candidate is one bridge binary a benchmark measures.
type candidate struct{ name, bin string }

// envBaselineRefs names the baselines' commits (comma-separated, in the
// order of the binaries in baselineEnv): hack/perf-baseline.sh sets it.
const envBaselineRefs = "BASELINE_REFS"

// candidates is this tree's binary, then the baselines' when given:
// baselineEnv holds one binary or several separated by ':', named
// "baseline" when alone and "baseline-REF" (envBaselineRefs) when several.
func candidates(bin, baselineEnv string) []candidate {
	cs := []candidate{{"this", bin}}
	bases := filepath.SplitList(os.Getenv(baselineEnv))
	refs := strings.Split(os.Getenv(envBaselineRefs), ",")
	for i, base := range bases {
		name := "baseline"
		if len(bases) > 1 && i < len(refs) {
			name += "-" + refs[i]
		}
		cs = append(cs, candidate{name, base})
	}
	return cs
}

// BenchmarkStartupToFirstAnswer: from exec to the first HTTP answer of
// GET /health, a bridge restarting on a DATA_DIR it made before (unlinked),
// the median of b.N starts, interleaved with the baseline's starts; and the
// CPU time each process used until that answer (ms-cpu-median-*).
//
//	go test -run=NONE -bench=StartupToFirstAnswer -benchtime=15x ./test/process
//	hack/perf-baseline.sh main StartupToFirstAnswer -benchtime=15x
func BenchmarkStartupToFirstAnswer(b *testing.B) {
	skipProcessTest(b)
	cs := candidates(bridgeBin, envBaselineBin)
	dirs := make([]string, len(cs))
	times := make([][]firstAnswer, len(cs))
	for i, c := range cs {
		dirs[i] = b.TempDir()
		startToFirstAnswer(b, c.bin, dirs[i]) // creates the databases
	}
	peer, peerDir := os.Getenv(envPeerWuzapiBin), ""
	if peer != "" {
		peerDir = wuzapiDir(b, peer)
		startWuzapiToFirstAnswer(b, peerDir) // creates its databases
	}
	var peerTimes []firstAnswer
	b.ResetTimer()
	for range b.N {
		for i, c := range cs {
			times[i] = append(times[i], startToFirstAnswer(b, c.bin, dirs[i]))
		}
		if peer != "" {
			peerTimes = append(peerTimes, startWuzapiToFirstAnswer(b, peerDir))
		}
	}
	b.StopTimer()
	for i, c := range cs {
		b.ReportMetric(ms(median(walls(times[i]))), "ms-median-"+c.name)
		b.ReportMetric(ms(median(cpus(times[i]))), "ms-cpu-median-"+c.name)
		b.ReportMetric(ms(median(readies(times[i]))), "ms-ready-median-"+c.name)
	}
	if len(cs) == 2 {
		b.ReportMetric(float64(median(walls(times[1])))/float64(median(walls(times[0]))), "x-faster")
	}
	if peer != "" {
		b.ReportMetric(ms(median(walls(peerTimes))), "ms-median-wuzapi")
		b.ReportMetric(ms(median(cpus(peerTimes))), "ms-cpu-median-wuzapi")
		b.ReportMetric(float64(median(walls(peerTimes)))/float64(median(walls(times[0]))), "x-faster-than-wuzapi")
		b.ReportMetric(float64(median(walls(peerTimes)))/float64(median(readies(times[0]))), "x-ready-faster-than-wuzapi")
	}
	b.ReportMetric(0, "ns/op")
}

// wuzapiDir is a directory holding a copy of wuzapi's binary: wuzapi keeps
// its databases beside its executable.
func wuzapiDir(b *testing.B, bin string) string {
	b.Helper()
	dir := b.TempDir()
	exe, err := os.ReadFile(bin)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(dir+"/wuzapi", exe, 0o700); err != nil { //nolint:gosec // an executable
		b.Fatal(err)
	}
	return dir
}

// startWuzapiToFirstAnswer starts wuzapi as its README does and returns
// the time until GET /session/status answered anything (401 without a
// user's token: its router, database and users are up).
func startWuzapiToFirstAnswer(b *testing.B, dir string) firstAnswer {
	b.Helper()
	addr := freeAddr(b)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(dir+"/wuzapi", "-address", "127.0.0.1", "-port", port, "-admintoken", "peer-admin-token")
	cmd.Dir = dir
	return timeToFirstAnswer(b, cmd, "http://"+addr+"/session/status", func([]byte) bool { return true })
}

// startToFirstAnswer starts bin on dataDir and returns the time until
// GET /health answered anything, and until it answered with the stores
// open (the link no longer "starting"); the process is killed after.
func startToFirstAnswer(b *testing.B, bin, dataDir string) firstAnswer {
	b.Helper()
	addr := freeAddr(b)
	cmd := exec.Command(bin)
	cmd.Env = append(validEnv(dataDir), "LISTEN_ADDR="+addr)
	return timeToFirstAnswer(b, cmd, "http://"+addr+"/health", func(body []byte) bool {
		return !strings.Contains(string(body), `"whatsapp":"starting"`)
	})
}

// firstAnswer is one start: the time from exec to the first answer, the CPU
// time the process had used by then (all its threads), which a loaded
// machine lengthens far less than the wall time, and the time until an
// answer said the process was ready (its databases open: wuzapi's first
// answer already needs its database).
type firstAnswer struct{ wall, cpu, ready time.Duration }

func walls(as []firstAnswer) []time.Duration {
	return project(as, func(a firstAnswer) time.Duration { return a.wall })
}
func cpus(as []firstAnswer) []time.Duration {
	return project(as, func(a firstAnswer) time.Duration { return a.cpu })
}
func readies(as []firstAnswer) []time.Duration {
	return project(as, func(a firstAnswer) time.Duration { return a.ready })
}

func project(as []firstAnswer, f func(firstAnswer) time.Duration) []time.Duration {
	ds := make([]time.Duration, len(as))
	for i, a := range as {
		ds[i] = f(a)
	}
	return ds
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// processCPU is the CPU time pid's threads have used, from each one's
// /proc/<pid>/task/<tid>/schedstat (nanoseconds on the CPU first).
func processCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for _, t := range tasks {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		if f := strings.Fields(string(raw)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			total += time.Duration(n)
		}
	}
	return total
}

// timeToFirstAnswer starts cmd and returns the time until url answered
// anything and the CPU time used by then, then the time until an answer's
// body was ready; the process is killed after.
func timeToFirstAnswer(b *testing.B, cmd *exec.Cmd, url string, ready func(body []byte) bool) firstAnswer {
	b.Helper()
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	var first firstAnswer
	for time.Since(start) < 30*time.Second {
		resp, err := hc.Get(url) //nolint:noctx // a benchmark's poll
		if err != nil {
			time.Sleep(200 * time.Microsecond)
			continue
		}
		at := time.Since(start)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if first.wall == 0 {
			first = firstAnswer{wall: at, cpu: processCPU(b, cmd.Process.Pid)}
		}
		if ready(body) {
			first.ready = at
			return first
		}
		time.Sleep(200 * time.Microsecond)
	}
	b.Fatalf("%s never answered ready", cmd.Path)
	return firstAnswer{}
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(b *testing.B) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// smapsRollup is a process's resident memory split as the kernel counts it
// (/proc/<pid>/smaps_rollup), in KiB: anonymous pages (heap, stacks,
// SQLite's memory) and file-backed ones (mostly the executable's own text
// and data).
type smapsRollup struct{ rss, anon, file int }

func readSmapsRollup(b *testing.B, pid int) smapsRollup {
	b.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		b.Fatal(err)
	}
	fields := map[string]int{}
	for _, line := range strings.Split(string(raw), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB"))); err == nil {
			fields[name] = kb
		}
	}
	r := smapsRollup{rss: fields["Rss"], anon: fields["Anonymous"]}
	r.file = r.rss - r.anon
	return r
}

func (r smapsRollup) add(o smapsRollup) smapsRollup {
	return smapsRollup{r.rss + o.rss, r.anon + o.anon, r.file + o.file}
}

// report adds the three figures in MiB, averaged over n, named with suffix.
func (r smapsRollup) report(b *testing.B, n int, suffix string) {
	for _, f := range []struct {
		name string
		kb   int
	}{{"rss", r.rss}, {"anon", r.anon}, {"file", r.file}} {
		b.ReportMetric(float64(f.kb)/1024/float64(n), fmt.Sprintf("MiB-%s-%s", f.name, suffix))
	}
}
