// Package metrics exposes the bridge's Prometheus metrics on GET /metrics:
// sends by status, attempts and their latency, webhook deliveries, queue
// depths, the session's state, reconnects and heartbeat age, plus the Go
// runtime's and the process's standard families.
//
// The bridge writes Prometheus' text format itself instead of using the
// client library (client_golang). Merely linking that library costs every
// start about 3 ms before main runs: its package initialisation builds a
// default registry with Go and process collectors, runtime/metrics'
// tables, procfs' regular expressions, expvar and a protocol buffer file,
// even when nothing is scraped yet. What the bridge serves is small — a
// few counters, one histogram, gauges read through callbacks — and the
// format is a page of rules, so writing it is less code than the start-up
// it saves. The tests parse every scrape with Prometheus' own parser
// (prometheus/common/expfmt), which checks the output as Prometheus would.
//
// Each Metrics is independent, so tests can build as many as they like.
// Values the bridge already tracks elsewhere (queue depths, the session's
// state, the heartbeat) are read through callbacks at scrape time rather
// than mirrored into gauges that could drift from the truth.
package metrics

import (
	"strings"
	"sync/atomic"
	"time"

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

// Metrics are the bridge's metrics; Handler serves them.
type Metrics struct {
	messages     *counterVec
	attempts     *counterVec
	sendDuration *histogram
	webhooks     *counterVec
	deadLetters  *counterVec
	reconnects   atomic.Uint64
	// gauges and sessionState are set by Watch before the first scrape
	// and only read after.
	gauges       []gaugeFunc
	sessionState func() string
}

// gaugeFunc is a gauge whose value a callback gives at each scrape.
type gaugeFunc struct {
	name, help string
	value      func() float64
}

// New makes the counters. The gauges read the parts
// that report into these counters, so they are added by Watch once those
// parts exist.
func New() *Metrics {
	m := &Metrics{
		messages: newCounterVec(namespace+"_messages_total",
			"Messages reaching each status (queued when accepted, then sent, delivered, read or failed).", "status"),
		attempts: newCounterVec(namespace+"_send_attempts_total",
			"Send attempts by outcome; a message has up to 1 + len(RETRY_SCHEDULE).", "outcome"),
		sendDuration: newHistogram(namespace+"_send_duration_seconds",
			"Duration of one send attempt, whatever its outcome.", sendDurationBuckets),
		// Label names in the order the text format lists them: sorted.
		webhooks: newCounterVec(namespace+"_webhook_deliveries_total",
			"Webhook delivery attempts by subscription and outcome (success: a 2xx answer or a NATS PubAck).", "outcome", "subscription"),
		deadLetters: newCounterVec(namespace+"_webhook_dead_letters_total",
			"Webhook events that became dead letters after their retry window, by subscription (see GET /api/admin/webhooks/failed).", "subscription"),
	}
	for _, s := range bridge.Statuses {
		m.messages.add(labelValues{statusLabel(s)})
	}
	for _, o := range outcomes {
		m.attempts.add(labelValues{o})
		m.webhooks.add(labelValues{o, defaultSubscription}) // present before the first event
	}
	m.deadLetters.add(labelValues{defaultSubscription})
	return m
}

// Watch adds the gauges read from src at each scrape. Call it once,
// before the metrics are served.
func (m *Metrics) Watch(src Sources) {
	gauge := func(name, help string, f func() float64) {
		if f != nil {
			m.gauges = append(m.gauges, gaugeFunc{name: namespace + "_" + name, help: help, value: f})
		}
	}
	gauge("send_queue_depth", "Messages waiting for a send attempt.", src.SendQueueDepth)
	gauge("webhook_queue_depth", "Webhook events waiting for delivery.", src.WebhookQueueDepth)
	gauge("heartbeat_age_seconds", "Seconds since the last heartbeat of the WhatsApp connection (NaN: none yet).", src.HeartbeatAge)
	gauge("sending_restricted", "1 while WhatsApp restricts the account's sending (rate-overlimit, reach-out time lock) and the send queue holds, else 0.",
		src.SendingRestricted)
	gauge("disk_free_bytes", "Free bytes of DATA_DIR's volume at the last reading (every second); below DISK_RESERVE the bridge stops receiving and refuses sends.",
		src.DiskFree)
	m.sessionState = src.SessionState
}

// MessageStatus counts a message reaching status (the send queue's
// Observer).
func (m *Metrics) MessageStatus(status bridge.Status) {
	m.messages.inc(labelValues{statusLabel(status)})
}

// SendAttempt counts one send attempt, sent (ok) or not, that took d (the
// send queue's Observer).
func (m *Metrics) SendAttempt(ok bool, d time.Duration) {
	m.attempts.inc(labelValues{outcome(ok)})
	m.sendDuration.observe(d.Seconds())
}

// defaultSubscription is WEBHOOK_URL's subscription, whose series exist
// from the start.
const defaultSubscription = "default"

// WebhookDelivery counts one delivery attempt to subscription; delivered
// is true when the receiver answered 2xx (NATS: the stream's PubAck).
func (m *Metrics) WebhookDelivery(subscription string, delivered bool) {
	m.webhooks.inc(labelValues{outcome(delivered), subscription})
}

// WebhookDeadLetter counts one event of subscription that became a dead
// letter.
func (m *Metrics) WebhookDeadLetter(subscription string) {
	m.deadLetters.inc(labelValues{subscription})
}

// Reconnect counts one reconnection of the session.
func (m *Metrics) Reconnect() { m.reconnects.Add(1) }

func outcome(ok bool) string {
	if ok {
		return OutcomeSuccess
	}
	return OutcomeFailure
}

// gather reads every family for one scrape, in no particular order.
func (m *Metrics) gather() []family {
	families := make([]family, 0, 48)
	families = append(families,
		m.messages.family(), m.attempts.family(), m.sendDuration.family(),
		m.webhooks.family(), m.deadLetters.family(),
		counterFamily(namespace+"_session_reconnects_total",
			"Times the session reconnected to WhatsApp after losing its connection.", float64(m.reconnects.Load())))
	for _, g := range m.gauges {
		families = append(families, gaugeFamily(g.name, g.help, g.value()))
	}
	if m.sessionState != nil {
		families = append(families, sessionStateFamily(m.sessionState()))
	}
	families = appendGoFamilies(families)
	return appendProcessFamilies(families)
}

// sessionStateFamily reports msgbridge_session_state{state} one-hot: 1
// for the current state, 0 for the others. A state not in SessionStates is
// reported too, so a new state is visible before the contract lists it.
func sessionStateFamily(current string) family {
	f := family{name: namespace + "_session_state", help: "The session's state: 1 for the current one, 0 for the others.", kind: kindGauge}
	known := false
	for _, s := range contract.SessionStates {
		v := 0.0
		if string(s) == current {
			v, known = 1, true
		}
		f.samples = append(f.samples, sample{labels: []label{{"state", string(s)}}, value: v})
	}
	if !known {
		f.samples = append(f.samples, sample{labels: []label{{"state", current}}, value: 1})
	}
	sortSamples(f.samples)
	return f
}
