package controllers

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	bridgemetrics "github.com/msgbridge/msgbridge/bridge/metrics"
)

// pendingBridgeMetrics are metrics the alerts and dashboard read that the
// bridge does not export yet. The test fails once the bridge exports one, so
// that this list only shrinks.
var pendingBridgeMetrics = []string{}

// Issue 18 (ship): the chart's PrometheusRule passes Prometheus' own rule
// checks (what promtool check rules runs), holds the promised alerts, and
// every metric its rules and the Grafana dashboard read exists.
func TestChartAlertsAndDashboard(t *testing.T) {
	objs := renderChart(t, "msgbridge-system", "prometheusRule.enabled=true", "grafanaDashboard.enabled=true",
		"metrics.serviceMonitor.enabled=true", "metrics.bridgePodMonitor.enabled=true")
	rules := ofKind(objs, "PrometheusRule")
	dashboards := ofKind(objs, "ConfigMap")
	if len(rules) != 1 || len(dashboards) != 1 || len(ofKind(objs, "PodMonitor")) != 1 {
		t.Fatalf("%d PrometheusRules, %d ConfigMaps, %d PodMonitors; want one each", len(rules), len(dashboards), len(ofKind(objs, "PodMonitor")))
	}
	known := knownMetrics(t)
	for _, name := range pendingBridgeMetrics {
		if known[name] {
			t.Errorf("the bridge now exports %s: drop it from pendingBridgeMetrics", name)
		}
		t.Logf("pending: %s is read by the alerts but not exported by the bridge yet", name)
		known[name] = true
	}
	p := parser.NewParser(parser.Options{})

	spec, err := yaml.Marshal(rules[0].Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	groups, errs := rulefmt.Parse(spec, false, model.UTF8Validation, p)
	for _, err := range errs {
		t.Errorf("rule check: %v", err)
	}
	var alerts []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			checkMetricsKnown(t, p, "alert "+r.Alert, r.Expr, known)
		}
	}
	slices.Sort(alerts)
	want := []string{"MessagingBridgeClientOutdated", "MessagingBridgeHeartbeatStale", "MessagingBridgeNotConnected", "MessagingBridgeSendQueueGrowing",
		"MessagingBridgeSendingRestricted", "MessagingBridgeStalled", "MessagingBridgeSubscriptionUnhealthy", "MessagingBridgeWebhookDeadLetters", "MsgbridgeOperatorDown"}
	if !slices.Equal(alerts, want) {
		t.Errorf("alerts %v, want %v", alerts, want)
	}

	for _, expr := range dashboardExprs(t, dashboards[0]) {
		checkMetricsKnown(t, p, "dashboard", expr, known)
	}
}

// knownMetrics are the operator's registered metrics and the bridge's (from
// its own registry, with every source set).
func knownMetrics(t *testing.T) map[string]bool {
	t.Helper()
	// up: Prometheus' own series of each scrape target.
	known := map[string]bool{"up": true}
	// Describe, not Gather: a vector without series yet gathers nothing.
	descs := make(chan *prometheus.Desc)
	go func() {
		metrics.Registry.(prometheus.Collector).Describe(descs)
		close(descs)
	}()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range descs {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			known[m[1]] = true
		}
	}
	var src bridgemetrics.Sources
	v := reflect.ValueOf(&src).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Func {
			f.Set(reflect.MakeFunc(f.Type(), func([]reflect.Value) []reflect.Value {
				out := make([]reflect.Value, f.Type().NumOut())
				for j := range out {
					out[j] = reflect.Zero(f.Type().Out(j))
				}
				return out
			}))
		}
	}
	rec := httptest.NewRecorder()
	m := bridgemetrics.New()
	m.Watch(src)
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (\S+) (\S+)`).FindAllStringSubmatch(string(body), -1) {
		known[m[1]] = true
		if m[2] == "histogram" {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				known[m[1]+suffix] = true
			}
		}
	}
	return known
}

func checkMetricsKnown(t *testing.T, p parser.Parser, where, expr string, known map[string]bool) {
	t.Helper()
	e, err := p.ParseExpr(expr)
	if err != nil {
		t.Errorf("%s: %q: %v", where, expr, err)
		return
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok && !known[vs.Name] {
			t.Errorf("%s reads %s, which neither the operator nor the bridge exports", where, vs.Name)
		}
		return nil
	})
}

// dashboardExprs are the PromQL expressions of the dashboard's panels, with
// Grafana's variables replaced by what Grafana substitutes.
func dashboardExprs(t *testing.T, cm *unstructured.Unstructured) []string {
	t.Helper()
	raw, _, _ := unstructured.NestedString(cm.Object, "data", "msgbridge.json")
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(raw), &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	if dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatal("dashboard without uid or panels")
	}
	vars := strings.NewReplacer("$__rate_interval", "5m", "$namespace", ".*")
	var out []string
	for _, panel := range dash.Panels {
		if len(panel.Targets) == 0 {
			t.Errorf("panel %q has no query", panel.Title)
		}
		for _, target := range panel.Targets {
			out = append(out, vars.Replace(target.Expr))
		}
	}
	return out
}
