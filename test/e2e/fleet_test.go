package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

const (
	fleetNS = "fleet"
	// fleetPoll is the operator's poll interval in the benchmark: it bounds
	// how late the status shows a bridge connected.
	fleetPoll = 10 * time.Second
	// fleetLinkers scan QR codes in parallel, as that many people would.
	fleetLinkers = 8
)

// TestFleetBench (make fleet-bench; FLEET_BENCH=N bridges) measures how many
// linked bridges one node of the end-to-end cluster holds, and what they
// cost: it installs the chart, links one bridge alone (the baseline, same
// run, same node), then applies N-1 more at once, links each through the
// simulator, sends one message through each and times its arrival at the
// contact's phone, and reads the memory of every bridge process, of all
// pods, and the operator's CPU and memory. It is not part of make test.
func TestFleetBench(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("FLEET_BENCH"))
	if err != nil || n < 2 {
		t.Skip("FLEET_BENCH=<bridges, at least 2> runs the fleet benchmark (make fleet-bench)")
	}
	needCluster(t)
	// The kubelet's pod limit leaves room for CoreDNS and the operator.
	t.Setenv("E2E_MAX_PODS", strconv.Itoa(n+10))
	t.Setenv("E2E_VOLUMES", strconv.Itoa(n))
	c, sim := startClusterWithSimulator(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cluster state at the failure:\n%s", tail(c.kubectl("get", "pods,mb", "-A", "-o", "wide")))
		}
	})
	contact := sim.Contact(contactNo, "Alice")
	// One operator replica: the figures are one operator's, as before the
	// chart ran two by default (the standby only renews its Lease bid).
	c.helm(t, "install", release, filepath.Join(repoRoot, "charts", "msgbridge"), "-n", operatorNS, "--create-namespace",
		"--set", "image.repository=localhost/msgbridge,image.tag=e2e,image.pullPolicy=Never",
		"--set", "pollInterval="+fleetPoll.String(), "--set", "replicas=1", "--wait", "--timeout", "3m")
	restrictedNamespace(t, c, fleetNS)
	operator := testutil.Poll(t, wait, func() (int, bool) {
		pids := podProcesses(t, "manager")
		return firstOr(pids, 0), len(pids) == 1
	}, "the operator's process was not found")
	f := &fleet{c: c, sim: sim, contact: contact, operator: operator}

	baseline := f.grow(t, 0, 1)
	all := f.grow(t, 1, n)
	baseline.log(t, "baseline: 1 bridge")
	all.log(t, fmt.Sprintf("fleet: %d more bridges applied at once, %d in all", n-1, n))

	// A node's restart: every pod ends at once, first with the default
	// connect jitter, then with none, the two side by side.
	withJitter := f.restart(t, f.bridges, "default ("+contract.DefaultConnectJitter+")")
	withJitter.log(t, n)
	f.setJitter(t, f.bridges, &metav1.Duration{})
	without := f.restart(t, f.bridges, "0s")
	without.log(t, n)
}

// fleet is the benchmark's cluster, simulator and operator process.
type fleet struct {
	c        *cluster
	sim      *wasim.Simulator
	contact  *wasim.User
	operator int
	// bridges are every bridge applied so far.
	bridges []*msgbridgev1alpha1.MessagingBridge
}

// phase is what growing the fleet by some bridges measured.
type phase struct {
	bridges, total int
	// ready: applied to every new one Available; connected: applied to
	// every new one SessionConnected, linking included.
	ready, connected time.Duration
	// roundTrips: POST /send to the contact's phone receiving it, per new
	// bridge.
	roundTrips []time.Duration
	// bridgeRSS of every bridge process running after the phase, bytes;
	// bridgeCharged and bridgeWorkingSet what each one's container cgroup
	// is charged, as the kubelet and the OOM killer see a pod.
	bridgeRSS, bridgeCharged, bridgeWorkingSet []int64
	// podsMemory is the kubepods cgroup's usage (every pod), bytes.
	podsMemory int64
	// operatorCPU is the operator's CPU time during the phase; operatorRSS
	// its resident memory after it.
	operatorCPU time.Duration
	operatorRSS int64
}

// grow applies the bridges fleet-<from> to fleet-<to-1> at once, links each
// and sends one message through each, and measures.
func (f *fleet) grow(t *testing.T, from, to int) phase {
	t.Helper()
	p := phase{bridges: to - from, total: to}
	cpuBefore := processCPU(t, f.operator)
	applied := time.Now()
	bridges := make([]*msgbridgev1alpha1.MessagingBridge, 0, to-from)
	for i := from; i < to; i++ {
		bridges = append(bridges, f.apply(t, i))
	}
	f.bridges = append(f.bridges, bridges...)
	f.waitAll(t, bridges, msgbridgev1alpha1.ConditionAvailable)
	p.ready = time.Since(applied)
	f.link(t, bridges)
	f.waitAll(t, bridges, msgbridgev1alpha1.ConditionSessionConnected)
	p.connected = time.Since(applied)
	p.operatorCPU = processCPU(t, f.operator) - cpuBefore
	for _, mb := range bridges {
		p.roundTrips = append(p.roundTrips, f.roundTrip(t, mb))
	}
	for _, pid := range podProcesses(t, "bridge") {
		p.bridgeRSS = append(p.bridgeRSS, processRSS(t, pid))
		usage, ws := cgroupMemory(t, pid)
		p.bridgeCharged, p.bridgeWorkingSet = append(p.bridgeCharged, usage), append(p.bridgeWorkingSet, ws)
	}
	p.podsMemory = kubepodsMemory(t)
	p.operatorRSS = processRSS(t, f.operator)
	return p
}

func fleetAdminToken(i int) string { return fmt.Sprintf("admin-token-%04d-0123456789abcdef", i) }
func fleetAPIKey(i int) string     { return fmt.Sprintf("api-key-%04d-0123456789abcdef", i) }

// apply creates bridge i with its keys.
func (f *fleet) apply(t *testing.T, i int) *msgbridgev1alpha1.MessagingBridge {
	t.Helper()
	name := fmt.Sprintf("fleet-%03d", i)
	keys := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: fleetNS, Name: name + "-keys"},
		StringData: map[string]string{"apiKey": fleetAPIKey(i), "adminToken": fleetAdminToken(i)},
	}
	create(t, f.c, keys)
	mb := &msgbridgev1alpha1.MessagingBridge{
		ObjectMeta: metav1.ObjectMeta{Namespace: fleetNS, Name: name},
		Spec: msgbridgev1alpha1.MessagingBridgeSpec{
			Image:               "localhost/msgbridge-wasim:e2e",
			APIKeySecretRef:     &msgbridgev1alpha1.SecretKeyReference{Name: keys.Name, Key: "apiKey"},
			AdminTokenSecretRef: &msgbridgev1alpha1.SecretKeyReference{Name: keys.Name, Key: "adminToken"},
		},
	}
	create(t, f.c, mb)
	return mb
}

// waitAll waits until condition typ of every bridge is True, reading the
// whole namespace at once.
func (f *fleet) waitAll(t *testing.T, bridges []*msgbridgev1alpha1.MessagingBridge, typ string) {
	t.Helper()
	want := map[string]bool{}
	for _, mb := range bridges {
		want[mb.Name] = true
	}
	testutil.Poll(t, 10*time.Minute, func() (string, bool) {
		var list msgbridgev1alpha1.MessagingBridgeList
		if err := f.c.client.List(context.Background(), &list, client.InNamespace(fleetNS)); err != nil {
			return err.Error(), false
		}
		var missing []string
		for _, mb := range list.Items {
			if want[mb.Name] && !meta.IsStatusConditionTrue(mb.Status.Conditions, typ) {
				missing = append(missing, mb.Name)
			}
		}
		return fmt.Sprintf("%d of %d not %s: %v", len(missing), len(want), typ, missing), len(missing) == 0 && len(list.Items) >= len(want)
	}, "the fleet never became %s", typ)
}

// link scans each bridge's QR code with its own phone, fleetLinkers at a
// time.
func (f *fleet) link(t *testing.T, bridges []*msgbridgev1alpha1.MessagingBridge) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(bridges))
	slots := make(chan struct{}, fleetLinkers)
	for _, mb := range bridges {
		base := serviceURL(t, f.c, mb)
		waitServing(t, base)
		i, _ := strconv.Atoi(strings.TrimPrefix(mb.Name, "fleet-"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			if err := f.linkOne(base, i); err != nil {
				errs <- fmt.Errorf("%s: %w", mb.Name, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// linkOne reads bridge i's QR code through its Service and scans it with
// the phone of account 49151<i>, retrying while the bridge has none yet.
func (f *fleet) linkOne(base string, i int) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	phone := f.sim.Phone(fmt.Sprintf("49151%07d", i))
	for {
		qr, err := fetchQR(ctx, base, fleetAdminToken(i))
		if err == nil {
			_, err = phone.ScanQR(ctx, qr)
			if err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("linking: %w (last: %w)", ctx.Err(), err)
		case <-time.After(time.Second):
		}
	}
}

func fetchQR(ctx context.Context, base, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/session/qr", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set(contract.AdminTokenHeader, token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var qr struct{ QR string }
	if err := json.NewDecoder(resp.Body).Decode(&qr); err != nil || resp.StatusCode != http.StatusOK || qr.QR == "" {
		return "", fmt.Errorf("GET /session/qr: HTTP %d (%w)", resp.StatusCode, err)
	}
	return qr.QR, nil
}

// roundTrip sends one text through mb to the contact and times its arrival
// at the contact's phone.
func (f *fleet) roundTrip(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge) time.Duration {
	t.Helper()
	i, _ := strconv.Atoi(strings.TrimPrefix(mb.Name, "fleet-"))
	base := serviceURL(t, f.c, mb)
	begin := time.Now()
	id := sendText(t, base, fleetAPIKey(i), "hello from "+mb.Name)
	if got, err := f.contact.WaitMessage(waitCtx(t), id); err != nil || got.Text() != "hello from "+mb.Name {
		t.Fatalf("the contact got %v, %v from %s", got, err, mb.Name)
	}
	return time.Since(begin)
}

// sendText is POST /send of one text to the contact; it returns the
// WhatsApp id.
func sendText(t *testing.T, base, apiKey, text string) string {
	t.Helper()
	form := url.Values{"number": {contactNo}, "type[]": {"text"}, "text[]": {text}}
	req, err := http.NewRequestWithContext(waitCtx(t), http.MethodPost, base+"/send", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(contract.APIKeyHeader, apiKey)
	var res struct {
		Messages []struct {
			WhatsappID string `json:"whatsapp_id"`
		}
	}
	body := do(t, http.DefaultClient, req, http.StatusOK)
	if err := json.Unmarshal(body, &res); err != nil || len(res.Messages) != 1 || res.Messages[0].WhatsappID == "" {
		t.Fatalf("POST /send: %s (%v)", body, err)
	}
	return res.Messages[0].WhatsappID
}

func (p phase) log(t *testing.T, what string) {
	t.Helper()
	rtt := slices.Clone(p.roundTrips)
	slices.Sort(rtt)
	t.Logf("FLEET %s", what)
	t.Logf("FLEET   applied to all Ready %.1fs, to all linked and connected %.1fs", p.ready.Seconds(), p.connected.Seconds())
	for _, m := range []struct {
		what   string
		values []int64
	}{{"cgroup charge", p.bridgeCharged}, {"cgroup working set", p.bridgeWorkingSet}, {"process RSS", p.bridgeRSS}} {
		mean, lo, hi := spreadOf(m.values)
		t.Logf("FLEET   per bridge (%d), %s: mean %.1f MiB, min %.1f, max %.1f", len(m.values), m.what, mib(mean), mib(lo), mib(hi))
	}
	t.Logf("FLEET   all pods' memory (kubepods cgroup) %.0f MiB", mib(p.podsMemory))
	t.Logf("FLEET   operator CPU during the phase %.2fs, operator RSS %.1f MiB", p.operatorCPU.Seconds(), mib(p.operatorRSS))
	t.Logf("FLEET   round trip send -> contact's phone over %d bridges: median %s, max %s", len(rtt),
		lastOr(rtt[:len(rtt)/2+1], 0).Round(time.Millisecond), lastOr(rtt, 0).Round(time.Millisecond))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// spreadOf is the mean, least and greatest of values.
func spreadOf(values []int64) (mean, lo, hi int64) {
	if len(values) == 0 {
		return 0, 0, 0
	}
	var sum int64
	for _, v := range values {
		sum += v
	}
	return sum / int64(len(values)), slices.Min(values), slices.Max(values)
}

func firstOr[T any](s []T, d T) T {
	if len(s) == 0 {
		return d
	}
	return s[0]
}

func lastOr[T any](s []T, d T) T {
	if len(s) == 0 {
		return d
	}
	return s[len(s)-1]
}
