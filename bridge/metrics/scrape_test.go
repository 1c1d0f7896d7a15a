package metrics

import (
	"compress/gzip"
	"io"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// serve answers one request to m's handler in memory.
func serve(m *Metrics, method string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/metrics", nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, req)
	return rec
}

// parse reads text with Prometheus' own parser, failing on anything it
// rejects.
func parse(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	families, err := parseText(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return families
}

func parseText(text string) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(strings.NewReader(text))
}

// The families the bridge serves and their types, as client_golang served
// them (less promhttp's own error counter): dashboards and alerts read them
// by these names.
var wantFamilies = map[string]dto.MetricType{
	"msgbridge_disk_free_bytes":            dto.MetricType_GAUGE,
	"msgbridge_heartbeat_age_seconds":      dto.MetricType_GAUGE,
	"msgbridge_messages_total":             dto.MetricType_COUNTER,
	"msgbridge_send_attempts_total":        dto.MetricType_COUNTER,
	"msgbridge_send_duration_seconds":      dto.MetricType_HISTOGRAM,
	"msgbridge_send_queue_depth":           dto.MetricType_GAUGE,
	"msgbridge_sending_restricted":         dto.MetricType_GAUGE,
	"msgbridge_session_reconnects_total":   dto.MetricType_COUNTER,
	"msgbridge_session_state":              dto.MetricType_GAUGE,
	"msgbridge_webhook_dead_letters_total": dto.MetricType_COUNTER,
	"msgbridge_webhook_deliveries_total":   dto.MetricType_COUNTER,
	"msgbridge_webhook_queue_depth":        dto.MetricType_GAUGE,
	"go_gc_duration_seconds":               dto.MetricType_SUMMARY,
	"go_gc_gogc_percent":                   dto.MetricType_GAUGE,
	"go_gc_gomemlimit_bytes":               dto.MetricType_GAUGE,
	"go_goroutines":                        dto.MetricType_GAUGE,
	"go_info":                              dto.MetricType_GAUGE,
	"go_memstats_alloc_bytes":              dto.MetricType_GAUGE,
	"go_memstats_alloc_bytes_total":        dto.MetricType_COUNTER,
	"go_memstats_buck_hash_sys_bytes":      dto.MetricType_GAUGE,
	"go_memstats_frees_total":              dto.MetricType_COUNTER,
	"go_memstats_gc_sys_bytes":             dto.MetricType_GAUGE,
	"go_memstats_heap_alloc_bytes":         dto.MetricType_GAUGE,
	"go_memstats_heap_idle_bytes":          dto.MetricType_GAUGE,
	"go_memstats_heap_inuse_bytes":         dto.MetricType_GAUGE,
	"go_memstats_heap_objects":             dto.MetricType_GAUGE,
	"go_memstats_heap_released_bytes":      dto.MetricType_GAUGE,
	"go_memstats_heap_sys_bytes":           dto.MetricType_GAUGE,
	"go_memstats_last_gc_time_seconds":     dto.MetricType_GAUGE,
	"go_memstats_mallocs_total":            dto.MetricType_COUNTER,
	"go_memstats_mcache_inuse_bytes":       dto.MetricType_GAUGE,
	"go_memstats_mcache_sys_bytes":         dto.MetricType_GAUGE,
	"go_memstats_mspan_inuse_bytes":        dto.MetricType_GAUGE,
	"go_memstats_mspan_sys_bytes":          dto.MetricType_GAUGE,
	"go_memstats_next_gc_bytes":            dto.MetricType_GAUGE,
	"go_memstats_other_sys_bytes":          dto.MetricType_GAUGE,
	"go_memstats_stack_inuse_bytes":        dto.MetricType_GAUGE,
	"go_memstats_stack_sys_bytes":          dto.MetricType_GAUGE,
	"go_memstats_sys_bytes":                dto.MetricType_GAUGE,
	"go_sched_gomaxprocs_threads":          dto.MetricType_GAUGE,
	"go_threads":                           dto.MetricType_GAUGE,
}

// wantProcessFamilies are read from /proc: Linux only.
var wantProcessFamilies = map[string]dto.MetricType{
	"process_cpu_seconds_total":            dto.MetricType_COUNTER,
	"process_max_fds":                      dto.MetricType_GAUGE,
	"process_network_receive_bytes_total":  dto.MetricType_COUNTER,
	"process_network_transmit_bytes_total": dto.MetricType_COUNTER,
	"process_open_fds":                     dto.MetricType_GAUGE,
	"process_resident_memory_bytes":        dto.MetricType_GAUGE,
	"process_start_time_seconds":           dto.MetricType_GAUGE,
	"process_virtual_memory_bytes":         dto.MetricType_GAUGE,
	"process_virtual_memory_max_bytes":     dto.MetricType_GAUGE,
}

func everySource() Sources {
	return Sources{
		SendQueueDepth: func() float64 { return 1 }, WebhookQueueDepth: func() float64 { return 2 },
		SessionState: func() string { return "connected" }, HeartbeatAge: math.NaN,
		SendingRestricted: func() float64 { return 0 }, DiskFree: func() float64 { return 5e9 },
	}
}

func TestFamiliesTheirTypesAndOrder(t *testing.T) {
	rec := serve(watching(everySource()), http.MethodGet, nil)
	// The text format, version 0.0.4; the library adds how it escaped
	// names (escaping=underscores), which Prometheus reads too.
	mediaType, params, err := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	if err != nil || mediaType != "text/plain" || params["version"] != "0.0.4" {
		t.Errorf("Content-Type %q", rec.Header().Get("Content-Type"))
	}
	text := rec.Body.String()
	fams := parse(t, text)
	want := wantFamilies
	if runtime.GOOS == "linux" {
		want = make(map[string]dto.MetricType)
		for _, m := range []map[string]dto.MetricType{wantFamilies, wantProcessFamilies} {
			for name, typ := range m {
				want[name] = typ
			}
		}
	}
	for name, typ := range want {
		if f, ok := fams[name]; !ok {
			t.Errorf("no %s", name)
		} else if f.GetType() != typ {
			t.Errorf("%s is a %v, want %v", name, f.GetType(), typ)
		}
	}
	for name := range fams {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected family %s", name)
		}
	}
	var names []string
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			names = append(names, strings.Fields(rest)[0])
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("families not sorted by name: %v", names)
	}
	if !math.IsNaN(value(t, fams, "msgbridge_heartbeat_age_seconds", "", "")) {
		t.Error("NaN heartbeat age not served as NaN")
	}
}

// Label values with backslashes, quotes and newlines reach Prometheus
// unchanged.
func TestOddTextIsEscaped(t *testing.T) {
	m := New()
	odd := "a\\b\"c\nd} e,f=\"g\""
	m.WebhookDelivery(odd, true)
	m.WebhookDeadLetter(odd)
	fams := parse(t, serve(m, http.MethodGet, nil).Body.String())
	if got := value(t, fams, "msgbridge_webhook_deliveries_total", "subscription", odd); got != 1 {
		t.Errorf("odd subscription's deliveries = %v", got)
	}
	if got := value(t, fams, "msgbridge_webhook_dead_letters_total", "subscription", odd); got != 1 {
		t.Errorf("odd subscription's dead letters = %v", got)
	}
}

func TestHistogramIsCumulative(t *testing.T) {
	m := New()
	for _, d := range []time.Duration{
		5 * time.Millisecond, 50 * time.Millisecond, // 50 ms is on a bound: counted in le="0.05"
		700 * time.Millisecond, 90 * time.Second, // above every bound: +Inf only
	} {
		m.SendAttempt(true, d)
	}
	h := parse(t, serve(m, http.MethodGet, nil).Body.String())["msgbridge_send_duration_seconds"].GetMetric()[0].GetHistogram()
	want := map[float64]uint64{0.01: 1, 0.025: 1, 0.05: 2, 0.1: 2, 0.25: 2, 0.5: 2, 1: 3, 2.5: 3, 5: 3, 10: 3, 30: 3, 60: 3, math.Inf(1): 4}
	buckets := h.GetBucket()
	if len(buckets) != len(sendDurationBuckets)+1 {
		t.Fatalf("%d buckets, want %d", len(buckets), len(sendDurationBuckets)+1)
	}
	for _, b := range buckets {
		if got, w := b.GetCumulativeCount(), want[b.GetUpperBound()]; got != w {
			t.Errorf("le=%v: %d, want %d", b.GetUpperBound(), got, w)
		}
	}
	if h.GetSampleCount() != 4 {
		t.Errorf("count %d", h.GetSampleCount())
	}
	if math.Abs(h.GetSampleSum()-90.755) > 1e-9 {
		t.Errorf("sum %v, want 90.755", h.GetSampleSum())
	}
}

func TestGzipWhenAccepted(t *testing.T) {
	rec := serve(New(), http.MethodGet, http.Header{"Accept-Encoding": {"gzip"}})
	if rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("not gzipped: %v", rec.Header())
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := parse(t, string(text))["msgbridge_messages_total"]; !ok {
		t.Error("no msgbridge_messages_total in the gzipped answer")
	}
}

// A scraper that asks for OpenMetrics (Prometheus does when it may) gets
// it, with the families the text format has.
func TestOpenMetricsWhenAsked(t *testing.T) {
	m := watching(everySource())
	m.SendAttempt(true, 20*time.Millisecond)
	accept := "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
	rec := serve(m, http.MethodGet, http.Header{"Accept": {accept}})
	if got := rec.Header().Get("Content-Type"); !strings.HasPrefix(got, "application/openmetrics-text") {
		t.Fatalf("Content-Type %q, want OpenMetrics", got)
	}
	body := rec.Body.String()
	if !strings.HasSuffix(body, "# EOF\n") {
		t.Errorf("no # EOF at the end of the OpenMetrics answer:\n%s", body)
	}
	for _, want := range []string{
		"# TYPE msgbridge_send_duration_seconds histogram\n",
		"# TYPE msgbridge_messages counter\n", // OpenMetrics names a counter without _total
		`msgbridge_messages_total{status="queued"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in the OpenMetrics answer:\n%s", want, body)
		}
	}
}

// Counting (new subscriptions among them) while scraping: run with -race.
func TestConcurrentCountingAndScraping(t *testing.T) {
	m := watching(everySource())
	var wg sync.WaitGroup
	subscriptions := []string{"default", "crm", "erp", "audit"}
	for i := range 8 {
		wg.Go(func() {
			sub := subscriptions[i%len(subscriptions)]
			for range 500 {
				m.WebhookDelivery(sub, true)
				m.WebhookDeadLetter(sub)
				m.SendAttempt(false, time.Millisecond)
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for range 5 {
				if _, err := parseText(serve(m, http.MethodGet, nil).Body.String()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	fams := parse(t, serve(m, http.MethodGet, nil).Body.String())
	for _, sub := range subscriptions {
		if got := value(t, fams, "msgbridge_webhook_dead_letters_total", "subscription", sub); got != 1000 {
			t.Errorf("%s: %v dead letters, want 1000", sub, got)
		}
	}
	if got := value(t, fams, "msgbridge_send_duration_seconds", "", ""); got != 4000 {
		t.Errorf("%v send attempts observed, want 4000", got)
	}
}

func BenchmarkScrape(b *testing.B) {
	m := watching(everySource())
	m.WebhookDelivery("crm", true)
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	h := m.Handler()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}
