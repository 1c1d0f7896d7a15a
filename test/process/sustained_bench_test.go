package process

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// BenchmarkIncomingSustained: the simulator's contacts send texts to a
// bridge process at a steady total rate (SUSTAINED_RATE a second, default
// 1,000) for SUSTAINED_SECONDS (default 20), each on a schedule rather
// than as fast as it can, and the bridge delivers them to a loopback
// webhook. A bridge that keeps up delivers at the offered rate with a flat
// delay; one that falls behind shows a delay that grows for as long as the
// load lasts. The run's size comes from the two settings, not from b.N:
// one run takes the duration, so every -count is one run (leave -benchtime
// at its default; -benchtime=Nx would run the load twice).
//
// It reports the rate the simulator achieved ("sim-msg/s"; below the set
// rate, the load was not offered), how late the latest send started
// against its slot ("behind-ms"), the rate at which the messages reached
// the webhook ("msg/s", from the schedule's start to the last arrival),
// the delay from a contact's send to the webhook ("p50-ms", "p99-ms",
// "max-ms"), its growth ("lag-growth-ms": the median delay of the last
// second's sends minus the first second's; near 0 when the bridge keeps
// up), the out-of-order pairs (must be 0: more fail the run), the
// session.status events that said disconnected, the bridge's CPU time per
// text ("cpu-ms/msg") and its memory: its peak RSS ("peak-MB", VmHWM) and
// its anonymous resident pages at the end ("anon-MB", what a memory cgroup
// charges besides page cache), read from /proc. The log has, for each
// second, the median delay of its sends, the webhook's arrivals, the
// bridge's share of a core and its webhook backlog.
//
// A message's send time is the moment its contact called the simulator's
// send (wasim's User.Send), at its slot in the schedule or after: the
// simulator's encryption as the contact's phone and its write into the
// bridge's socket count as delay. That write waits when the bridge stops
// reading its socket, and the contact's next sends then start late; the
// delay leaves that wait out, so a behind-ms of seconds means the figures
// understate the lag (or that the machine starved the simulator; a loaded
// machine's scheduling alone gives tens to hundreds of ms): read sim-msg/s
// and behind-ms first. With hack/perf-baseline.sh the bridge of another
// commit runs the same load in the same run; -count repeats each
// candidate in a row, so call the script once per pair to interleave.
//
//	go test -run=NONE -bench=IncomingSustained ./test/process
//	SUSTAINED_RATE=500 RELEASE=1 hack/perf-baseline.sh 36f6f31 IncomingSustained
func BenchmarkIncomingSustained(b *testing.B) {
	skipProcessTest(b)
	load := sustainedLoadFromEnv(b)
	for _, c := range candidates(simBridgeBin, envBaselineSimBin) {
		b.Run(c.name, func(b *testing.B) {
			sim := wasim.Start(b)
			dataDir := linkedDataDirOf(b, sim, c.bin)
			hooks := newArrivals(b)
			env := append(simEnv(sim, dataDir), "WEBHOOK_URL="+hooks.srv.URL, "WEBHOOK_SECRET="+testWebhookSecret)
			if os.Getenv(envBurstProfile) != "" {
				env = append(env, "PPROF=on")
			}
			p := startBridge(b, c.bin, env)
			waitConnected(b, p)
			to := types.NewJID(testAccount, types.DefaultUserServer)
			contacts := warmContacts(b, sim, hooks, to, "49151000030")
			profiled := profileBurst(b, p, c.name)
			b.ResetTimer()
			watched := watchBridge(b, p)
			sent := load.send(b, contacts, to)
			arrived := hooks.drain(b, sent.ids())
			seconds := watched()
			profiled()
			b.StopTimer()
			sent.report(b, arrived)
			reportBridge(b, seconds, len(arrived))
			disordered := hooks.outOfOrder(sent.perContact)
			b.ReportMetric(float64(disordered), "out-of-order")
			if disordered > 0 { // a chat's order is a promise, not a figure
				b.Errorf("%d messages reached the webhook after a later one of their chat", disordered)
			}
			b.ReportMetric(float64(peakRSSKB(b, p.cmd.Process.Pid))/1024, "peak-MB")
			b.ReportMetric(float64(readSmapsRollup(b, p.cmd.Process.Pid).anon)/1024, "anon-MB")
			hooks.mu.Lock()
			b.ReportMetric(float64(hooks.drops), "disconnects")
			hooks.mu.Unlock()
			b.ReportMetric(0, "ns/op")
		})
	}
}

// warmContacts makes incomingContacts contacts, numbered from prefix, and
// has each send one text that reached the webhook: their Signal sessions
// are set up before the measured part.
func warmContacts(b *testing.B, sim *wasim.Simulator, hooks *arrivals, to types.JID, prefix string) []*wasim.User {
	b.Helper()
	contacts := make([]*wasim.User, incomingContacts)
	for i := range contacts {
		contacts[i] = sim.Contact(fmt.Sprintf("%s%02d", prefix, i), "Contact")
		hooks.wait(b, []string{sendB(b, contacts[i], to, "warm-up")})
	}
	return contacts
}

// sustainedLoad is the offered load: rate messages a second in total, for
// a duration.
type sustainedLoad struct {
	rate     int
	duration time.Duration
}

// Settings of BenchmarkIncomingSustained.
const (
	envSustainedRate    = "SUSTAINED_RATE"    // messages a second, all contacts together
	envSustainedSeconds = "SUSTAINED_SECONDS" // how long the load lasts
)

// sustainedLoadFromEnv reads the load from envSustainedRate and
// envSustainedSeconds; 1,000 a second for 20 s when they are unset.
func sustainedLoadFromEnv(b *testing.B) sustainedLoad {
	b.Helper()
	l := sustainedLoad{rate: 1000, duration: 20 * time.Second}
	if v := os.Getenv(envSustainedRate); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q: want messages a second, a positive integer", envSustainedRate, v)
		}
		l.rate = n
	}
	if v := os.Getenv(envSustainedSeconds); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			b.Fatalf("%s=%q: want seconds, at least 2 (the delay's growth compares the first and last)", envSustainedSeconds, v)
		}
		l.duration = time.Duration(n) * time.Second
	}
	return l
}

// count is how many messages the load sends.
func (l sustainedLoad) count() int {
	return int(int64(l.rate) * int64(l.duration) / int64(time.Second))
}

// due is when message n (of all contacts, in schedule order) is to be sent.
func (l sustainedLoad) due(start time.Time, n int) time.Time {
	return start.Add(time.Duration(int64(n) * int64(time.Second) / int64(l.rate)))
}

// sentLog is what the contacts sent: each message's id and send time by
// its place in the schedule, and each contact's ids in its order.
type sentLog struct {
	start, end time.Time // the schedule's start; the last send's return
	length     time.Duration
	id         []string
	at         []time.Time // when each message's contact called send
	behind     []time.Duration
	perContact [][]string
}

// send has the contacts send the load's messages, message n by contact
// n%len(contacts) at its slot in the schedule (or at once, when its
// contact is behind), each contact's in order.
func (l sustainedLoad) send(b *testing.B, contacts []*wasim.User, to types.JID) *sentLog {
	b.Helper()
	n := l.count()
	log := &sentLog{id: make([]string, n), at: make([]time.Time, n), behind: make([]time.Duration, n), perContact: make([][]string, len(contacts))}
	log.start, log.length = time.Now(), l.duration
	var wg sync.WaitGroup
	for c, u := range contacts {
		wg.Go(func() {
			for m := c; m < n; m += len(contacts) {
				// A pacer, not a wait for an event: message m is due then.
				due := l.due(log.start, m)
				time.Sleep(time.Until(due))
				log.at[m] = time.Now()
				log.behind[m] = log.at[m].Sub(due)
				log.id[m] = sendB(b, u, to, "text "+strconv.Itoa(m))
				log.perContact[c] = append(log.perContact[c], log.id[m])
			}
		})
	}
	wg.Wait()
	log.end = time.Now()
	return log
}

func (s *sentLog) ids() []string { return s.id }

// report adds the rates and the delays' figures (reportDelays) and logs
// the webhook's arrivals in each second; arrived holds each message's
// arrival, in schedule order.
func (s *sentLog) report(b *testing.B, arrived []time.Time) {
	n := float64(len(s.id))
	b.ReportMetric(n/s.end.Sub(s.start).Seconds(), "sim-msg/s")
	b.ReportMetric(ms(slices.Max(s.behind)), "behind-ms")
	last := slices.MaxFunc(arrived, func(x, y time.Time) int { return x.Compare(y) })
	b.ReportMetric(n/last.Sub(s.start).Seconds(), "msg/s")
	s.reportDelays(b, arrived)
	var perSecond []int // arrivals in each second since the schedule's start
	for _, t := range arrived {
		sec := int(t.Sub(s.start) / time.Second)
		for len(perSecond) <= sec {
			perSecond = append(perSecond, 0)
		}
		perSecond[sec]++
	}
	b.Logf("arrivals at the webhook in each second: %s", strings.Trim(fmt.Sprint(perSecond), "[]"))
}

// reportDelays adds the delay's percentiles and its growth, and logs the
// median delay of each second's sends (the curve behind the growth).
func (s *sentLog) reportDelays(b *testing.B, arrived []time.Time) {
	n := len(s.id)
	delays := make([]time.Duration, n)
	var bySecond [][]time.Duration // by the second of the schedule they were sent in
	for i := range delays {
		delays[i] = arrived[i].Sub(s.at[i])
		sec := int(s.at[i].Sub(s.start) / time.Second)
		for len(bySecond) <= sec {
			bySecond = append(bySecond, nil)
		}
		bySecond[sec] = append(bySecond[sec], delays[i])
	}
	slices.Sort(delays)
	b.ReportMetric(ms(delays[n/2]), "p50-ms")
	b.ReportMetric(ms(delays[n*99/100]), "p99-ms")
	b.ReportMetric(ms(delays[n-1]), "max-ms")
	// The last second is the schedule's last, not one a late send spilled
	// into.
	if final := bySecond[min(len(bySecond), int(s.length/time.Second))-1]; len(final) > 0 && len(bySecond[0]) > 0 {
		b.ReportMetric(ms(median(final)-median(bySecond[0])), "lag-growth-ms")
	}
	curve := make([]string, 0, len(bySecond))
	for _, ds := range bySecond {
		if len(ds) > 0 {
			curve = append(curve, strconv.FormatFloat(ms(median(ds)), 'f', 0, 64))
		}
	}
	b.Logf("median delay (ms) of each second's sends: %s", strings.Join(curve, " "))
}

// bridgeSecond is what the bridge did in one second of the run.
type bridgeSecond struct {
	cpu     time.Duration // CPU time (user and system) used in the second
	backlog int           // webhook events stored, not yet delivered, at its end
}

// watchBridge samples the bridge's CPU time and its webhook backlog
// (msgbridge_webhook_queue_depth on /metrics) once a second until the
// returned function is called, which gives each second's sample, the last
// one partial. On a shared machine the CPU tells a bridge that was slow
// from one that was starved; the backlog tells texts waiting for the
// webhook from texts still waiting to be decrypted and stored.
func watchBridge(b *testing.B, p *bridgeProcess) func() []bridgeSecond {
	b.Helper()
	pid, metricsURL := p.cmd.Process.Pid, "http://"+p.addr+"/metrics"
	stop, done := make(chan struct{}), make(chan []bridgeSecond, 1)
	go func() {
		var seconds []bridgeSecond
		last := cpuTime(b, pid)
		sample := func() {
			now := cpuTime(b, pid)
			seconds = append(seconds, bridgeSecond{cpu: now - last, backlog: gaugeOf(metricsURL, "msgbridge_webhook_queue_depth")})
			last = now
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				sample()
				done <- seconds
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	return func() []bridgeSecond { close(stop); return <-done }
}

// reportBridge adds the bridge's CPU time per message ("cpu-ms/msg": less
// moved by the machine's load than the rates) and logs its share of a core
// and its webhook backlog in each second.
func reportBridge(b *testing.B, seconds []bridgeSecond, messages int) {
	b.Helper()
	var total time.Duration
	shares, backlogs := make([]string, len(seconds)), make([]string, len(seconds))
	for i, s := range seconds {
		total += s.cpu
		shares[i], backlogs[i] = strconv.Itoa(int(100*s.cpu/time.Second)), strconv.Itoa(s.backlog)
	}
	b.ReportMetric(ms(total)/float64(messages), "cpu-ms/msg")
	b.Logf("the bridge's CPU in each second (%% of a core): %s", strings.Join(shares, " "))
	b.Logf("webhook events stored, not yet delivered, at each second's end: %s", strings.Join(backlogs, " "))
}

// cpuTime is the user and system CPU time process pid has used so far
// (/proc/PID/stat, in clock ticks of 10 ms).
func cpuTime(tb testing.TB, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Error(err)
		return 0
	}
	// Fields after the command's closing parenthesis; utime and stime are
	// the 14th and 15th of the line, the 12th and 13th after it.
	fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			tb.Error(err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// drainStall is how long drain waits without a single arrival before it
// gives up: a bridge far behind still delivers something every second, and
// one that reconnects after its link dropped delivers again within it.
const drainStall = 60 * time.Second

// drain waits until every id reached the webhook and returns their
// arrival times, in the order of ids. Unlike wait it has no overall
// deadline (an overloaded bridge may take minutes to catch up), and it
// looks at the arrivals ten times a second rather than at each one, so
// that counting does not take CPU from the bridge it measures.
func (a *arrivals) drain(b *testing.B, ids []string) []time.Time {
	b.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	progress, got := time.Now(), 0
	for {
		out, n := a.arrivedOf(ids)
		if n == len(ids) {
			return out
		}
		if n > got {
			progress, got = time.Now(), n
		}
		if time.Since(progress) > drainStall {
			a.mu.Lock()
			drops := a.drops
			a.mu.Unlock()
			b.Fatalf("%d of %d messages reached the webhook, none in the last %s (%d session.status disconnected)", got, len(ids), drainStall, drops)
		}
		<-tick.C
	}
}

// arrivedOf gives the arrival times of ids, in their order (the zero time
// for those yet to arrive), and how many arrived.
func (a *arrivals) arrivedOf(ids []string) ([]time.Time, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out, n := make([]time.Time, len(ids)), 0
	for i, id := range ids {
		if t, ok := a.at[id]; ok {
			out[i] = t
			n++
		}
	}
	return out, n
}

// TestSustainedLoadSpacesItsTexts: the schedule offers the set rate, one
// text every 1/rate over the duration, so that sim-msg/s below the rate is
// the simulator's doing, never the schedule's.
func TestSustainedLoadSpacesItsTexts(t *testing.T) {
	start := time.Unix(0, 0)
	for _, l := range []sustainedLoad{{rate: 1000, duration: 20 * time.Second}, {rate: 1500, duration: 2 * time.Second}} {
		gap := time.Second / time.Duration(l.rate)
		if n := l.count(); n != l.rate*int(l.duration/time.Second) {
			t.Fatalf("%d/s for %s: %d texts", l.rate, l.duration, n)
		}
		for n := 1; n < l.count(); n++ {
			if d := l.due(start, n).Sub(l.due(start, n-1)); d < gap || d > gap+1 {
				t.Fatalf("%d/s: text %d due %s after the one before, want %s", l.rate, n, d, gap)
			}
		}
		if last := l.due(start, l.count()-1).Sub(start); last < l.duration-gap-1 || last >= l.duration {
			t.Errorf("%d/s for %s: the last text due at %s", l.rate, l.duration, last)
		}
	}
}

// TestCPUTimeReadsTheProcessStat: cpuTime of the test process agrees with
// getrusage(2) to within the kernel's clock ticks.
func TestCPUTimeReadsTheProcessStat(t *testing.T) {
	deadline := time.Now().Add(10 * time.Second)
	for cpuTime(t, os.Getpid()) < 100*time.Millisecond && time.Now().Before(deadline) {
		for i := range 1_000_000 { // spends CPU until the kernel has counted some
			_ = strconv.Itoa(i)
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	got := cpuTime(t, os.Getpid())
	want := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if d := got - want; d < -50*time.Millisecond || d > 50*time.Millisecond {
		t.Errorf("cpuTime %s, getrusage %s", got, want)
	}
}
