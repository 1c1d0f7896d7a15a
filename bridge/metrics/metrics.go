// Package metrics exposes the bridge's Prometheus metrics on GET /metrics:
// sends by status, attempts and their latency, webhook deliveries, queue
// depths, the session's state, reconnects and heartbeat age, plus the Go
// runtime's and the process's standard families.
//
// It is built on Prometheus' client library (client_golang): the text
// format, OpenMetrics when the scraper asks for it, gzip, and the Go and
// process collectors come from the library (docs/design/20261127-metrics-
// on-client-golang.md says why the bridge no longer writes them itself).
// The registry is the bridge's own, not the client library's global one, so
// only what is declared here (plus the Go and process collectors) is served
// and tests can build as many as they like. Values the bridge already
// tracks elsewhere (queue depths, the session's state, the heartbeat) are
// read through callbacks at scrape time rather than mirrored into gauges
// that could drift from the truth.
package metrics

import (
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

const namespace = "msgbridge"

// Sources are the callbacks read at each scrape. A nil callback leaves its
// metric out. They run on the scraping goroutine, so they must be quick and
// safe for concurrent use.
type Sources struct {
	// SendQueueDepth: messages waiting for an attempt (status Queued).
	SendQueueDepth func() float64
	// WebhookQueueDepth: webhook events waiting for delivery.
	WebhookQueueDepth func() float64
	// SessionState: the session's state, one of contract.SessionStates.
	SessionState func() string
	// HeartbeatAge: seconds since the last heartbeat; return NaN when none
	// was ever recorded.
	HeartbeatAge func() float64
	// SendingRestricted: 1 while WhatsApp restricts sending (the queue
	// holds), else 0.
	SendingRestricted func() float64
	// DiskFree: free bytes of DATA_DIR's volume at the disk guard's last
	// reading.
	DiskFree func() float64
}

// Label values exist from the start, at 0: a rate() over a series that
// appears only with its first event misses that event. The statuses are
// bridge.Statuses and the session's states contract.SessionStates, each a
// series of msgbridge_session_state.
var outcomes = []string{OutcomeSuccess, OutcomeFailure}

// statusLabel is a status as a label value: lower-case.
func statusLabel(s bridge.Status) string { return strings.ToLower(string(s)) }

// The outcomes of a send attempt or a webhook delivery.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
)

// sendDurationBuckets span a fast local send (tens of ms) to the session's
// send timeout (a minute).
var sendDurationBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Metrics are the bridge's metrics and the registry that serves them.
type Metrics struct {
	registry     *prometheus.Registry
	messages     *prometheus.CounterVec
	attempts     *prometheus.CounterVec
	sendDuration prometheus.Histogram
	webhooks     *prometheus.CounterVec
	deadLetters  *prometheus.CounterVec
	reconnects   prometheus.Counter
}

// New makes the counters. The gauges read the parts
// that report into these counters, so they are added by Watch once those
// parts exist.
func New() *Metrics {
	m := &Metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "messages_total",
			Help: "Messages reaching each status (queued when accepted, then sent, delivered, read or failed).",
		}, []string{"status"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "send_attempts_total",
			Help: "Send attempts by outcome; a message has up to 1 + len(RETRY_SCHEDULE).",
		}, []string{"outcome"}),
		sendDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "send_duration_seconds",
			Help:    "Duration of one send attempt, whatever its outcome.",
			Buckets: sendDurationBuckets,
		}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "webhook_deliveries_total",
			Help: "Webhook delivery attempts by subscription and outcome (success: a 2xx answer or a NATS PubAck).",
		}, []string{"subscription", "outcome"}),
		deadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "webhook_dead_letters_total",
			Help: "Webhook events that became dead letters after their retry window, by subscription (see GET /api/admin/webhooks/failed).",
		}, []string{"subscription"}),
		reconnects: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "session_reconnects_total",
			Help: "Times the session reconnected to WhatsApp after losing its connection.",
		}),
	}
	for _, s := range bridge.Statuses {
		m.messages.WithLabelValues(statusLabel(s))
	}
	for _, o := range outcomes {
		m.attempts.WithLabelValues(o)
		m.webhooks.WithLabelValues(defaultSubscription, o) // present before the first event
	}
	m.deadLetters.WithLabelValues(defaultSubscription)
	m.registry = prometheus.NewRegistry()
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.messages, m.attempts, m.sendDuration, m.webhooks, m.deadLetters, m.reconnects)
	return m
}

// Watch adds the gauges read from src at each scrape. Call it once,
// before the metrics are served.
func (m *Metrics) Watch(src Sources) {
	gauge := func(name, help string, f func() float64) {
		if f != nil {
			m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help}, f))
		}
	}
	gauge("send_queue_depth", "Messages waiting for a send attempt.", src.SendQueueDepth)
	gauge("webhook_queue_depth", "Webhook events waiting for delivery.", src.WebhookQueueDepth)
	gauge("heartbeat_age_seconds", "Seconds since the last heartbeat of the WhatsApp connection (NaN: none yet).", src.HeartbeatAge)
	gauge("sending_restricted", "1 while WhatsApp restricts the account's sending (rate-overlimit, reach-out time lock) and the send queue holds, else 0.",
		src.SendingRestricted)
	gauge("disk_free_bytes", "Free bytes of DATA_DIR's volume at the last reading (every second); below DISK_RESERVE the bridge stops receiving and refuses sends.",
		src.DiskFree)
	if src.SessionState != nil {
		m.registry.MustRegister(sessionStateCollector{state: src.SessionState})
	}
}

// MessageStatus counts a message reaching status (the send queue's
// Observer).
func (m *Metrics) MessageStatus(status bridge.Status) {
	m.messages.WithLabelValues(statusLabel(status)).Inc()
}

// SendAttempt counts one send attempt, sent (ok) or not, that took d (the
// send queue's Observer).
func (m *Metrics) SendAttempt(ok bool, d time.Duration) {
	outcome := OutcomeSuccess
	if !ok {
		outcome = OutcomeFailure
	}
	m.attempts.WithLabelValues(outcome).Inc()
	m.sendDuration.Observe(d.Seconds())
}

// defaultSubscription is WEBHOOK_URL's subscription, whose series exist
// from the start.
const defaultSubscription = "default"

// WebhookDelivery counts one delivery attempt to subscription; delivered
// is true when the receiver answered 2xx (NATS: the stream's PubAck).
func (m *Metrics) WebhookDelivery(subscription string, delivered bool) {
	outcome := OutcomeSuccess
	if !delivered {
		outcome = OutcomeFailure
	}
	m.webhooks.WithLabelValues(subscription, outcome).Inc()
}

// WebhookDeadLetter counts one event of subscription that became a dead
// letter.
func (m *Metrics) WebhookDeadLetter(subscription string) {
	m.deadLetters.WithLabelValues(subscription).Inc()
}

// Reconnect counts one reconnection of the session.
func (m *Metrics) Reconnect() { m.reconnects.Inc() }

// Handler serves the registry in the Prometheus text format, or in
// OpenMetrics or protobuf when the scraper asks for it, gzipped when it
// accepts that. A failing collector leaves its metrics out rather than
// failing the whole scrape. The router admits GET alone and answers other
// methods 405 in the API's error shape.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	})
}

// sessionStateCollector reports msgbridge_session_state{state} one-hot: 1
// for the current state, 0 for the others. A state not in SessionStates is
// reported too, so a new state is visible before the contract lists it.
type sessionStateCollector struct {
	state func() string
}

var sessionStateDesc = prometheus.NewDesc(namespace+"_session_state",
	"The session's state: 1 for the current one, 0 for the others.", []string{"state"}, nil)

func (c sessionStateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- sessionStateDesc }

func (c sessionStateCollector) Collect(ch chan<- prometheus.Metric) {
	current := c.state()
	known := false
	for _, s := range contract.SessionStates {
		v := 0.0
		if string(s) == current {
			v, known = 1, true
		}
		ch <- prometheus.MustNewConstMetric(sessionStateDesc, prometheus.GaugeValue, v, string(s))
	}
	if !known {
		ch <- prometheus.MustNewConstMetric(sessionStateDesc, prometheus.GaugeValue, 1, current)
	}
}
