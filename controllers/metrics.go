package controllers

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
)

// The session metrics are set on every poll, unlike the status, which is
// written only on a change: they are the live view of every bridge.
var (
	sessionConnectedGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "messagingbridge_session_connected",
		Help: "1 when the bridge's SessionConnected condition is True (connected with a fresh heartbeat), else 0.",
	}, []string{"namespace", "name"})
	lastHeartbeatGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "messagingbridge_last_heartbeat_timestamp_seconds",
		Help: "Unix time of the bridge's last recorded heartbeat, as of the last successful poll.",
	}, []string{"namespace", "name"})
	// suspendedGauge lets alerts leave out bridges suspended on purpose.
	suspendedGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "messagingbridge_suspended",
		Help: "1 when the MessagingBridge is suspended (spec.suspend, and its StatefulSet scaled to zero), else 0.",
	}, []string{"namespace", "name"})

	// conditionGauge is one series per condition and status, as
	// kube-state-metrics shows conditions: alerts select a condition by
	// type and status without parsing a message.
	conditionGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "messagingbridge_condition",
		Help: "1 for the status a condition of the MessagingBridge has (True, False or Unknown), 0 for the two others.",
	}, []string{"namespace", "name", "type", "status"})

	// sessionReasonGauge tells the SessionConnected reasons apart, which
	// alerts such as the client version WhatsApp refuses need; one series
	// per bridge, its current reason.
	sessionReasonGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "messagingbridge_session_reason",
		Help: "1 with the reason of the bridge's SessionConnected condition (Connected, Disconnected, DiskFull, ClientOutdated...) as label; one series per bridge.",
	}, []string{"namespace", "name", "reason"})
	sessionReasons = struct {
		sync.Mutex
		last map[[2]string]string
	}{last: map[[2]string]string{}}
)

var conditionStatuses = []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown}

func init() {
	metrics.Registry.MustRegister(sessionConnectedGauge, lastHeartbeatGauge, suspendedGauge, conditionGauge, sessionReasonGauge)
}

// recordConditionMetrics publishes the conditions a round computed.
func recordConditionMetrics(namespace, name string, conditions []metav1.Condition) {
	for _, c := range conditions {
		for _, s := range conditionStatuses {
			conditionGauge.WithLabelValues(namespace, name, c.Type, string(s)).Set(gaugeBool(c.Status == s))
		}
	}
}

// recordSessionReason publishes the reason of SessionConnected, replacing
// the series of the last one.
func recordSessionReason(namespace, name, reason string) {
	sessionReasons.Lock()
	defer sessionReasons.Unlock()
	key := [2]string{namespace, name}
	if last, ok := sessionReasons.last[key]; ok && last != reason {
		sessionReasonGauge.DeleteLabelValues(namespace, name, last)
	}
	sessionReasons.last[key] = reason
	sessionReasonGauge.WithLabelValues(namespace, name, reason).Set(1)
}

// recordSessionMetrics publishes one poll's outcome. An unreadable bridge
// keeps its last heartbeat series: the time it was last seen alive is still
// true, and its age is what alerts should watch.
func recordSessionMetrics(namespace, name string, connected, suspended bool, state *bridgeclient.State) {
	sessionConnectedGauge.WithLabelValues(namespace, name).Set(gaugeBool(connected))
	suspendedGauge.WithLabelValues(namespace, name).Set(gaugeBool(suspended))
	if state != nil && state.LastHeartbeat != nil {
		lastHeartbeatGauge.WithLabelValues(namespace, name).Set(float64(state.LastHeartbeat.UnixNano()) / 1e9)
	}
}

// forgetConditionMetrics drops the series of a condition the bridge no
// longer has, so that an alert on its last value does not fire forever.
func forgetConditionMetrics(namespace, name, condType string) {
	conditionGauge.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "name": name, "type": condType})
}

// forgetMetrics drops a deleted bridge's series.
func forgetMetrics(namespace, name string) {
	sessionConnectedGauge.DeleteLabelValues(namespace, name)
	lastHeartbeatGauge.DeleteLabelValues(namespace, name)
	suspendedGauge.DeleteLabelValues(namespace, name)
	conditionGauge.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "name": name})
	sessionReasons.Lock()
	defer sessionReasons.Unlock()
	if last, ok := sessionReasons.last[[2]string{namespace, name}]; ok {
		sessionReasonGauge.DeleteLabelValues(namespace, name, last)
		delete(sessionReasons.last, [2]string{namespace, name})
	}
}

func gaugeBool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
