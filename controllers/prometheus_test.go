//go:build prometheus

// Prometheus' scrape and rule engine import its config package, which brings
// the AWS, Azure and Google SDKs (about 370 packages): this test builds only
// with -tags prometheus (make test runs it, as test-alerts), so that the
// suite's default test binary stays small.

package controllers

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery/targetgroup"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/scrape"
	"github.com/prometheus/prometheus/tsdb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	bridgemetrics "github.com/msgbridge/msgbridge/bridge/metrics"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
	"github.com/msgbridge/msgbridge/controllers/conditions"
)

// Issue 32.2: the chart's alerts, evaluated by Prometheus' own rule engine
// over what Prometheus' own scrape loop stored from a real operator metrics
// handler (the registry the reconciler records into) and a real bridge
// metrics handler, each scraped with the scrape configuration the
// Prometheus Operator generates from the chart's ServiceMonitor and
// PodMonitor. Every alert must name the bridge's own namespace: without
// honorLabels the operator's namespace replaced it.
func TestAlertsNameTheBridgesNamespace(t *testing.T) {
	const release = "msgbridge-system"
	objs := renderChart(t, release, "prometheusRule.enabled=true", "metrics.serviceMonitor.enabled=true",
		"metrics.bridgePodMonitor.enabled=true")

	// team-a/sales is down; team-b/sales has the same name and is merely
	// suspended; team-c/support is stalled. Recorded as the reconciler does.
	lastSeen := time.Now().Add(-time.Hour)
	recordSessionMetrics("team-a", "sales", false, false, &bridgeclient.State{LastHeartbeat: &lastSeen})
	recordSessionMetrics("team-b", "sales", false, true, nil)
	recordSessionMetrics("team-c", "support", false, false, nil)
	recordConditionMetrics("team-c", "support", []metav1.Condition{
		{Type: "Stalled", Status: metav1.ConditionTrue, Reason: conditions.ReasonSecretNotFound}})
	// team-d/crm delivers to a subscription that fails; team-b/sales'
	// subscriptions are healthy.
	recordConditionMetrics("team-d", "crm", []metav1.Condition{
		{Type: "SubscriptionsHealthy", Status: metav1.ConditionFalse, Reason: conditions.ReasonSubscriptionFailing}})
	recordConditionMetrics("team-b", "sales", []metav1.Condition{
		{Type: "SubscriptionsHealthy", Status: metav1.ConditionTrue, Reason: conditions.ReasonSubscriptionsHealthy}})
	// team-e/sales runs a client version WhatsApp refuses; team-a/sales is
	// merely disconnected.
	recordSessionReason("team-e", "sales", conditions.ReasonClientOutdated)
	recordSessionReason("team-a", "sales", conditions.ReasonDisconnected)
	t.Cleanup(func() {
		for _, b := range [][2]string{{"team-a", "sales"}, {"team-b", "sales"}, {"team-c", "support"}, {"team-d", "crm"}, {"team-e", "sales"}} {
			forgetMetrics(b[0], b[1])
		}
	})
	operator := httptest.NewServer(promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
	t.Cleanup(operator.Close)
	bridge := bridgemetrics.New()
	bridge.Watch(bridgemetrics.Sources{SendingRestricted: func() float64 { return 1 }})
	bridgeServer := httptest.NewServer(bridge.Handler())
	t.Cleanup(bridgeServer.Close)

	sm, pm := ofKind(objs, "ServiceMonitor")[0], ofKind(objs, "PodMonitor")[0]
	db := scrapeLikeThePrometheusOperator(t, []scrapeTarget{
		{monitor: sm, url: operator.URL, meta: model.LabelSet{
			"__meta_kubernetes_namespace": release, "__meta_kubernetes_service_name": "msgbridge-metrics",
			"__meta_kubernetes_pod_name": "msgbridge-7d9f-abcde", "__meta_kubernetes_pod_container_name": "manager",
		}},
		{monitor: pm, url: bridgeServer.URL, meta: model.LabelSet{
			"__meta_kubernetes_namespace": "team-a", "__meta_kubernetes_pod_name": "sales-0",
			"__meta_kubernetes_pod_container_name": "bridge", "__meta_kubernetes_pod_label_app_kubernetes_io_instance": "sales",
		}},
	})
	eval := ruleEvaluator(t, db, ofKind(objs, "PrometheusRule")[0])

	want := map[string][]string{
		"MessagingBridgeNotConnected":          {"team-a/sales", "team-c/support"},
		"MessagingBridgeHeartbeatStale":        {"team-a/sales"},
		"MessagingBridgeStalled":               {"team-c/support"},
		"MessagingBridgeSendingRestricted":     {"team-a/sales"},
		"MessagingBridgeSubscriptionUnhealthy": {"team-d/crm"},
		"MessagingBridgeClientOutdated":        {"team-e/sales"},
	}
	for alert, bridges := range want {
		waitForAlerts(t, eval, alert, bridges)
	}

	operator.Close() // the operator is gone: its target goes down
	waitForAlerts(t, eval, "MsgbridgeOperatorDown", []string{release + "/"})
}

// scrapeTarget is one endpoint of a monitor as Kubernetes service discovery
// would find it: its URL and the __meta_kubernetes_* labels.
type scrapeTarget struct {
	monitor *unstructured.Unstructured
	url     string
	meta    model.LabelSet
}

// scrapeLikeThePrometheusOperator runs Prometheus' scrape manager into a
// TSDB with one scrape job per monitor, configured as the Prometheus
// Operator configures it: honor_labels from the endpoint, the operator's
// own relabelings (namespace, pod, container, service, endpoint, job from
// the discovered target), then the monitor's relabelings.
func scrapeLikeThePrometheusOperator(t *testing.T, targets []scrapeTarget) *tsdb.DB {
	t.Helper()
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	var jobs []string
	groups := map[string][]*targetgroup.Group{}
	for _, tg := range targets {
		job, cfg := scrapeJob(t, tg.monitor)
		jobs = append(jobs, cfg)
		u, err := url.Parse(tg.url)
		if err != nil {
			t.Fatal(err)
		}
		target := tg.meta.Clone()
		target[model.AddressLabel] = model.LabelValue(u.Host)
		groups[job] = []*targetgroup.Group{{Source: job, Targets: []model.LabelSet{target}}}
	}
	cfg, err := config.Load("global:\n  scrape_interval: 100ms\n  scrape_timeout: 100ms\nscrape_configs:\n"+strings.Join(jobs, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := scrape.NewManager(&scrape.Options{DiscoveryReloadInterval: model.Duration(100 * time.Millisecond)},
		nil, nil, db, nil, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.ApplyConfig(cfg); err != nil {
		t.Fatal(err)
	}
	sets := make(chan map[string][]*targetgroup.Group, 1)
	sets <- groups
	go func() { _ = mgr.Run(sets) }()
	t.Cleanup(mgr.Stop)
	return db
}

// scrapeJob is the scrape_config the Prometheus Operator writes for the
// first endpoint of a ServiceMonitor or PodMonitor, at a test's interval.
func scrapeJob(t *testing.T, monitor *unstructured.Unstructured) (job, cfg string) {
	t.Helper()
	kind := map[string]string{"ServiceMonitor": "serviceMonitor", "PodMonitor": "podMonitor"}[monitor.GetKind()]
	field := map[string]string{"ServiceMonitor": "endpoints", "PodMonitor": "podMetricsEndpoints"}[monitor.GetKind()]
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", field)
	if len(endpoints) != 1 {
		t.Fatalf("%s has %d endpoints, want 1", monitor.GetName(), len(endpoints))
	}
	ep := endpoints[0].(map[string]any)
	honor, _ := ep["honorLabels"].(bool)
	job = fmt.Sprintf("%s/%s/%s/0", kind, monitor.GetNamespace(), monitor.GetName())
	relabel := []map[string]any{
		{"source_labels": []string{"__meta_kubernetes_namespace"}, "target_label": "namespace"},
		{"source_labels": []string{"__meta_kubernetes_pod_name"}, "target_label": "pod"},
		{"source_labels": []string{"__meta_kubernetes_pod_container_name"}, "target_label": "container"},
		{"target_label": "endpoint", "replacement": ep["port"]},
	}
	if kind == "serviceMonitor" {
		relabel = append(relabel,
			map[string]any{"source_labels": []string{"__meta_kubernetes_service_name"}, "target_label": "service"},
			map[string]any{"source_labels": []string{"__meta_kubernetes_service_name"}, "target_label": "job"})
	} else {
		relabel = append(relabel, map[string]any{"target_label": "job", "replacement": monitor.GetNamespace() + "/" + monitor.GetName()})
	}
	for _, r := range asSlice(ep["relabelings"]) {
		m := r.(map[string]any)
		relabel = append(relabel, map[string]any{"source_labels": m["sourceLabels"], "target_label": m["targetLabel"]})
	}
	out, err := yaml.Marshal([]map[string]any{{
		"job_name": job, "honor_labels": honor, "metrics_path": ep["path"],
		"scrape_interval": "100ms", "scrape_timeout": "100ms", "relabel_configs": relabel,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return job, "  " + strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", "\n  ") + "\n"
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// ruleEvaluator loads the PrometheusRule's alerts into Prometheus' rule
// engine; each call evaluates every alert now and returns the firing ones.
// The rules' `for` holds are dropped: they only delay the firing, and the
// labels an alert fires with are what this test checks.
func ruleEvaluator(t *testing.T, db *tsdb.DB, rule *unstructured.Unstructured) func() map[string][]*rules.Alert {
	t.Helper()
	spec, err := yaml.Marshal(rule.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	p := parser.NewParser(parser.Options{})
	groups, errs := rulefmt.Parse(spec, false, model.UTF8Validation, p)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var alerting []*rules.AlertingRule
	for _, r := range groups.Groups[0].Rules {
		expr, err := p.ParseExpr(r.Expr)
		if err != nil {
			t.Fatal(err)
		}
		alerting = append(alerting, rules.NewAlertingRule(r.Alert, expr, 0, 0,
			labels.FromMap(r.Labels), labels.FromMap(r.Annotations), labels.EmptyLabels(), "", false, nil))
	}
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: 10 * time.Second, LookbackDelta: time.Minute})
	query := rules.EngineQueryFunc(engine, db)
	return func() map[string][]*rules.Alert {
		out := map[string][]*rules.Alert{}
		for _, r := range alerting {
			if _, err := r.Eval(context.Background(), 0, time.Now(), query, &url.URL{Scheme: "http", Host: "prometheus.test"}, 0); err != nil {
				t.Fatalf("%s: %v", r.Name(), err)
			}
			for _, a := range r.ActiveAlerts() {
				if a.State == rules.StateFiring {
					out[r.Name()] = append(out[r.Name()], a)
				}
			}
		}
		return out
	}
}

// waitForAlerts waits until alert fires for exactly the bridges
// (namespace/name), and its summary names each.
func waitForAlerts(t *testing.T, eval func() map[string][]*rules.Alert, alert string, bridges []string) {
	t.Helper()
	eventually(t, 20*time.Second, func() (bool, string) {
		var got []string
		for _, a := range eval()[alert] {
			bridge := a.Labels.Get("namespace") + "/" + a.Labels.Get("name")
			if !strings.Contains(a.Annotations.Get("summary"), strings.TrimSuffix(bridge, "/")) {
				return false, fmt.Sprintf("%s for %s has the summary %q", alert, bridge, a.Annotations.Get("summary"))
			}
			got = append(got, bridge)
		}
		slices.Sort(got)
		return strings.Join(got, ",") == strings.Join(bridges, ","),
			fmt.Sprintf("%s fires for %v, want %v", alert, got, bridges)
	})
}
