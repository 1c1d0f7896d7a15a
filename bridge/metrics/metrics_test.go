package metrics

import (
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// scrape fetches /metrics from a real server and parses the text format.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL) //nolint:noctx // the test's own loopback server
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// value returns the value of the family's series with the given label
// (name "" for an unlabelled metric), failing when there is none.
func value(t *testing.T, families map[string]*dto.MetricFamily, family, label, labelValue string) float64 {
	t.Helper()
	f, ok := families[family]
	if !ok {
		t.Fatalf("no %s", family)
	}
	for _, m := range f.GetMetric() {
		match := label == ""
		for _, l := range m.GetLabel() {
			match = match || (l.GetName() == label && l.GetValue() == labelValue)
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	t.Fatalf("no %s{%s=%q}", family, label, labelValue)
	return 0
}

type sources struct {
	mu                  sync.Mutex
	sendDepth, whDepth  float64
	state               string
	heartbeatAgeSeconds float64
}

func (s *sources) read(f func() float64) func() float64 {
	return func() float64 { s.mu.Lock(); defer s.mu.Unlock(); return f() }
}

func (s *sources) Sources() Sources {
	return Sources{
		SendQueueDepth:    s.read(func() float64 { return s.sendDepth }),
		WebhookQueueDepth: s.read(func() float64 { return s.whDepth }),
		SessionState:      func() string { s.mu.Lock(); defer s.mu.Unlock(); return s.state },
		HeartbeatAge:      s.read(func() float64 { return s.heartbeatAgeSeconds }),
	}
}

func TestScrape(t *testing.T) {
	src := &sources{sendDepth: 3, whDepth: 7, state: "connected", heartbeatAgeSeconds: 4.5}
	m := watching(src.Sources())
	m.MessageStatus(bridge.StatusQueued)
	m.MessageStatus(bridge.StatusQueued)
	m.MessageStatus(bridge.StatusSent)
	m.MessageStatus(bridge.StatusRead)
	m.SendAttempt(true, 120*time.Millisecond)
	m.SendAttempt(false, 3*time.Millisecond)
	m.SendAttempt(false, 2*time.Millisecond)
	m.WebhookDelivery("default", true)
	m.WebhookDelivery("default", false)
	m.WebhookDelivery("crm", false)
	m.Reconnect()

	fams := scrape(t, m)
	tests := []struct {
		family, label, value string
		want                 float64
	}{
		{"msgbridge_messages_total", "status", "queued", 2},
		{"msgbridge_messages_total", "status", "sent", 1},
		{"msgbridge_messages_total", "status", "read", 1},
		{"msgbridge_messages_total", "status", "failed", 0}, // present before the first failure
		{"msgbridge_send_attempts_total", "outcome", "success", 1},
		{"msgbridge_send_attempts_total", "outcome", "failure", 2},
		{"msgbridge_send_duration_seconds", "", "", 3},
		{"msgbridge_webhook_deliveries_total", "outcome", "success", 1},
		{"msgbridge_webhook_deliveries_total", "outcome", "failure", 1},
		{"msgbridge_webhook_deliveries_total", "subscription", "crm", 1},
		{"msgbridge_session_reconnects_total", "", "", 1},
		{"msgbridge_send_queue_depth", "", "", 3},
		{"msgbridge_webhook_queue_depth", "", "", 7},
		{"msgbridge_heartbeat_age_seconds", "", "", 4.5},
		{"msgbridge_session_state", "state", "connected", 1},
		{"msgbridge_session_state", "state", "unpaired", 0},
		{"msgbridge_session_state", "state", "logged_out", 0},
	}
	for _, tt := range tests {
		if got := value(t, fams, tt.family, tt.label, tt.value); got != tt.want {
			t.Errorf("%s{%s=%q} = %v, want %v", tt.family, tt.label, tt.value, got, tt.want)
		}
	}
	h := fams["msgbridge_send_duration_seconds"].GetMetric()[0].GetHistogram()
	if math.Abs(h.GetSampleSum()-0.125) > 1e-9 {
		t.Errorf("send duration sum %v, want 0.125", h.GetSampleSum())
	}
	wantFamilies := []string{"go_goroutines"}
	if runtime.GOOS == "linux" { // the process families are read from /proc
		wantFamilies = append(wantFamilies, "process_cpu_seconds_total")
	}
	for _, family := range wantFamilies {
		if _, ok := fams[family]; !ok {
			t.Errorf("no %s: the Go and process families are missing", family)
		}
	}
}

// The callbacks are read at each scrape: the gauges follow the bridge.
func TestCallbacksAreReadAtScrapeTime(t *testing.T) {
	src := &sources{state: "connecting"}
	m := watching(src.Sources())
	if got := value(t, scrape(t, m), "msgbridge_session_state", "state", "connecting"); got != 1 {
		t.Fatalf("connecting = %v", got)
	}
	src.mu.Lock()
	src.state, src.sendDepth = "connected", 12
	src.mu.Unlock()
	fams := scrape(t, m)
	if value(t, fams, "msgbridge_session_state", "state", "connecting") != 0 ||
		value(t, fams, "msgbridge_session_state", "state", "connected") != 1 ||
		value(t, fams, "msgbridge_send_queue_depth", "", "") != 12 {
		t.Errorf("callbacks not re-read: %v", fams["msgbridge_session_state"])
	}
}

func TestUnknownStateIsStillShown(t *testing.T) {
	m := watching(Sources{SessionState: func() string { return "banned" }})
	fams := scrape(t, m)
	if value(t, fams, "msgbridge_session_state", "state", "banned") != 1 {
		t.Error("an unknown state is hidden")
	}
	if n := len(fams["msgbridge_session_state"].GetMetric()); n != len(contract.SessionStates)+1 {
		t.Errorf("%d series", n)
	}
}

func TestNilCallbacksLeaveTheirMetricsOut(t *testing.T) {
	fams := scrape(t, New())
	for _, family := range []string{"msgbridge_send_queue_depth", "msgbridge_webhook_queue_depth",
		"msgbridge_heartbeat_age_seconds", "msgbridge_session_state"} {
		if _, ok := fams[family]; ok {
			t.Errorf("%s present without a callback", family)
		}
	}
	if _, ok := fams["msgbridge_messages_total"]; !ok {
		t.Error("counters missing")
	}
}

// Two instances do not collide: the registry is not the global one.
func TestInstancesAreIndependent(t *testing.T) {
	a, b := New(), New()
	a.Reconnect()
	if got := value(t, scrape(t, b), "msgbridge_session_reconnects_total", "", ""); got != 0 {
		t.Errorf("b sees a's reconnect: %v", got)
	}
}

func TestConcurrentUpdates(t *testing.T) {
	m := New()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				m.MessageStatus(bridge.StatusSent)
				m.SendAttempt(true, time.Millisecond)
			}
		})
	}
	wg.Wait()
	if got := value(t, scrape(t, m), "msgbridge_messages_total", "status", "sent"); got != 8000 {
		t.Errorf("sent = %v, want 8000", got)
	}
}

// Every status and session state has its series, at 0, before its first
// event; the lists are the domain's and the contract's.
func TestSeriesExistFromTheStart(t *testing.T) {
	fams := scrape(t, watching(Sources{SessionState: func() string { return "" }}))
	for _, s := range bridge.Statuses {
		if got := value(t, fams, "msgbridge_messages_total", "status", strings.ToLower(string(s))); got != 0 {
			t.Errorf("%s = %v", s, got)
		}
	}
	for _, s := range contract.SessionStates {
		if got := value(t, fams, "msgbridge_session_state", "state", string(s)); got != 0 {
			t.Errorf("%s = %v", s, got)
		}
	}
}

// watching is a Metrics whose gauges read src.
func watching(src Sources) *Metrics {
	m := New()
	m.Watch(src)
	return m
}
