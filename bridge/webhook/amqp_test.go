package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// rabbitQueue is the test consumer's durable queue, bound to the exchange
// msgbridge for every routing key under the prefix msgbridge.
const rabbitQueue = "events"

// bindQueue declares the exchange as the bridge does and a durable queue
// bound to it for msgbridge.#.
func bindQueue(tb testing.TB, r *testutil.RabbitMQ) {
	tb.Helper()
	conn, err := amqp.Dial(r.URL() + "/")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		tb.Fatal(err)
	}
	if err := ch.ExchangeDeclare("msgbridge", amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
		tb.Fatal(err)
	}
	if _, err := ch.QueueDeclare(rabbitQueue, true, false, false, false, nil); err != nil {
		tb.Fatal(err)
	}
	if err := ch.QueueBind(rabbitQueue, "msgbridge.#", "msgbridge", false, nil); err != nil {
		tb.Fatal(err)
	}
}

// drainQueue reads every message the queue holds, as a consumer would.
func drainQueue(tb testing.TB, r *testutil.RabbitMQ) []amqp.Delivery {
	tb.Helper()
	conn, err := amqp.Dial(r.URL() + "/")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		tb.Fatal(err)
	}
	var out []amqp.Delivery
	for {
		d, ok, err := ch.Get(rabbitQueue, true)
		if err != nil {
			tb.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, d)
	}
}

// repeatsAndLosses compares the messages a consumer read with the n events
// sent: the message ids never read, and the reads beyond the first of an id.
func repeatsAndLosses(msgs []amqp.Delivery, n int) (lost, repeated int) {
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m.MessageId] {
			repeated++
		}
		seen[m.MessageId] = true
	}
	return n - len(seen), repeated
}

// Events published to RabbitMQ count only once the broker confirmed them;
// the broker stopped mid-stream and restarted, the queue ends up with
// every event, in each chat's order, as a persistent message whose id is
// the webhook-id and whose routing key names account and type. RabbitMQ
// has no duplicate window (NATS drops a repeat by Nats-Msg-Id): a publish
// the broker stored and whose confirm was lost with the connection reaches
// the queue twice, with one message id, which a consumer de-duplicates.
func TestAMQPStopMidStreamLosesAndRepeatsNothing(t *testing.T) {
	started := time.Now()
	r := testutil.StartRabbitMQ(t)
	t.Logf("rabbitmq-server cold start: %v", time.Since(started).Round(time.Millisecond))
	bindQueue(t, r)
	obs := &countingObserver{}
	o := startOutbox(t, "", func(opt *Options) {
		opt.Account = func() string { return "491510000000" }
		opt.Timeout = 2 * time.Second
		opt.Observer = obs
	})
	o.subscribe(t, "rabbit", r.URL()+"/")
	const n = 200
	for i := range n / 2 {
		o.enqueue(t, upsert(i))
	}
	r.Stop() // mid-stream: some of the first half are confirmed, the rest wait
	for i := n / 2; i < n; i++ {
		o.enqueue(t, upsert(i))
	}
	testutil.Poll(t, 30*time.Second, func() (int64, bool) { f := obs.failed.Load(); return f, f >= 20 }, "failed publishes while down")
	if s, _ := o.Get(context.Background(), "rabbit"); s.Health.State != HealthFailing || s.Health.Pending == 0 {
		t.Fatalf("while down: %+v", s.Health)
	}
	restarted := time.Now()
	r.Start()
	t.Logf("rabbitmq-server restart: %v", time.Since(restarted).Round(time.Millisecond))
	o.waitDrained(t, 2*time.Minute)
	t.Logf("drained %v after the restart began; %d failed publishes", time.Since(restarted).Round(time.Millisecond), obs.failed.Load())
	msgs := drainQueue(t, r)
	lost, repeated := repeatsAndLosses(msgs, n)
	t.Logf("the queue holds %d messages: %d of %d events lost, %d repeated", len(msgs), lost, n, repeated)
	// A repeat is an event the broker stored whose confirm the stop cut
	// off: only a publish in flight then, at most one per worker. Its
	// message id is the first copy's, so a consumer that drops an id it
	// has seen sees every event once.
	if lost != 0 || repeated > o.opts.Workers {
		t.Errorf("%d of %d events lost, %d repeated (at most %d publishes were in flight)", lost, n, repeated, o.opts.Workers)
	}
	checkAMQPMessages(t, msgs)
}

// checkAMQPMessages checks each message's routing, properties and headers,
// and that each chat's events arrived in the order they were enqueued.
func checkAMQPMessages(t *testing.T, msgs []amqp.Delivery) {
	t.Helper()
	last := map[string]int{}
	for _, m := range msgs {
		if m.RoutingKey != "msgbridge.491510000000.message.upsert" || m.Exchange != "msgbridge" || m.DeliveryMode != amqp.Persistent ||
			m.Type != TypeMessageUpsert || m.ContentType != "application/json" || m.Headers["webhook-id"] != m.MessageId {
			t.Fatalf("message %s: key %s, mode %d, type %s, headers %v", m.MessageId, m.RoutingKey, m.DeliveryMode, m.Type, m.Headers)
		}
		chat, seq := chatAndSeq(t, m.Body)
		if seq < last[chat] {
			t.Errorf("chat %s: event %d after %d", chat, seq, last[chat])
		}
		last[chat] = seq
	}
}

// One broker for the refusals, which need no restart: an unroutable
// event, then the probe's answers, the last with the broker stopped.
func TestAMQPRefusals(t *testing.T) {
	r := testutil.StartRabbitMQ(t)
	t.Run("unroutable", func(t *testing.T) { unroutableWaitsForAQueue(t, r) })
	t.Run("probe", func(t *testing.T) { probeRefusesWithoutDetail(t, r) })
}

// A topic exchange drops a message no queue takes, and still confirms it:
// the bridge publishes mandatory, so that the broker returns it, and keeps
// the event pending until a queue is bound.
func unroutableWaitsForAQueue(t *testing.T, r *testutil.RabbitMQ) {
	o := startOutbox(t, "", func(opt *Options) { opt.Timeout = 2 * time.Second })
	o.subscribe(t, "rabbit", r.URL()+"/") // declares the exchange; no queue is bound yet
	o.enqueue(t, upsert(1))
	testutil.Poll(t, 20*time.Second, func() (string, bool) {
		s, _ := o.Get(context.Background(), "rabbit")
		return s.Health.LastError, strings.Contains(s.Health.LastError, "unroutable")
	}, "a returned publish recorded as a failure")
	bindQueue(t, r)
	// The back-off after one failure is short; the event goes on its retry.
	o.waitDrained(t, time.Minute)
	if msgs := drainQueue(t, r); len(msgs) != 1 {
		t.Errorf("the queue holds %d messages, want 1", len(msgs))
	}
}

// An amqp:// target is probed at creation: a broker that refuses the
// credentials or the virtual host is refused with its reason, one that
// does not answer without the network's detail.
func probeRefusesWithoutDetail(t *testing.T, r *testutil.RabbitMQ) {
	o := openOutbox(t, "", nil)
	err := o.Create(context.Background(), Subscription{ID: "rabbit", Target: r.URL() + "/", Enabled: true,
		Credentials: Credentials{User: "guest", Password: "wrong"}})
	if be, ok := errors.AsType[*bridge.Error](err); !ok || be.Code != "target_unreachable" || !strings.Contains(be.Message, "refused") {
		t.Errorf("wrong password: %v", err)
	}
	if be, ok := errors.AsType[*bridge.Error](err); ok && strings.Contains(be.Message, "wrong") {
		t.Errorf("the answer shows the password: %s", be.Message)
	}
	err = o.Create(context.Background(), Subscription{ID: "rabbit", Target: r.URL() + "/nosuchvhost", Enabled: true})
	if be, ok := errors.AsType[*bridge.Error](err); !ok || be.Code != "target_unreachable" {
		t.Errorf("no such vhost: %v", err)
	}
	r.Stop()
	err = o.Create(context.Background(), Subscription{ID: "rabbit", Target: r.URL() + "/", Enabled: true})
	if be, ok := errors.AsType[*bridge.Error](err); !ok || be.Code != "target_unreachable" || strings.Contains(be.Message, "refused") {
		t.Errorf("no broker: %v", err)
	}
}

// The form of an amqp:// target and its options are checked before any
// connection, each refusal with its code.
func TestAMQPTargetValidation(t *testing.T) {
	for target, want := range map[string]string{
		"amqp://rabbit": "",
		"amqps://rabbit:5671/%2F?exchange=ev&prefix=a.b": "",
		"amqp://rabbit/prod?prefix=wa-1":                 "",
		"amqp://rabbit/a/b":                              "invalid_target",
		"amqp://rabbit:99999/":                           "invalid_target",
		"amqp://user:pw@rabbit/":                         "invalid_target",
		"amqp://rabbit/?queue=x":                         "invalid_target_option",
		"amqp://rabbit/?exchange=a&exchange=b":           "invalid_target_option",
		"amqp://rabbit/?exchange=amq.topic":              "invalid_target_option",
		"amqp://rabbit/?exchange=a%20b":                  "invalid_target_option",
		"amqp://rabbit/?prefix=a.*":                      "invalid_target_option",
		"amqp://rabbit/?prefix=a..b":                     "invalid_target_option",
		"amqp://rabbit/?prefix=a.%23":                    "invalid_target_option",
		"amqp://rabbit/?%zz":                             "invalid_target_option",
	} {
		s := Subscription{ID: "a", Target: target}
		err := s.Validate()
		be, _ := errors.AsType[*bridge.Error](err)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", target, err)
		case want != "" && (be == nil || be.Code != want):
			t.Errorf("%s: %v, want %s", target, err, want)
		}
	}
	s := Subscription{ID: "a", Target: "amqp://rabbit/", Credentials: Credentials{Token: "t"}}
	if be, ok := errors.AsType[*bridge.Error](s.Validate()); !ok || be.Code != "invalid_credentials" {
		t.Errorf("a token: %v, want invalid_credentials", s.Validate())
	}
	u, _ := url.Parse("amqps://rabbit/%2Fprod?exchange=ev&prefix=wa")
	if got, err := parseAMQPTarget(u); err != nil || got.vhost != "/prod" || got.host != "rabbit:5671" || got.routingKey("", "x") != "wa.unlinked.x" {
		t.Errorf("%+v, %v", got, err)
	}
}

func FuzzAMQPTarget(f *testing.F) {
	for _, seed := range []string{"amqp://h/", "amqps://h:1/%2F?exchange=e&prefix=p.q", "amqp://h/?x=1", "amqp://[::1]:5672/v"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.Parse(target)
		if err != nil {
			return
		}
		got, err := parseAMQPTarget(u)
		if err != nil {
			if _, ok := errors.AsType[*bridge.Error](err); !ok {
				t.Fatalf("%q: %v is not a *bridge.Error", target, err)
			}
			return
		}
		// A routing key the broker would read as a pattern, or an
		// exchange it reserves, never passes.
		if strings.ContainsAny(got.prefix, "*# ") || strings.HasPrefix(got.exchange, "amq.") || got.vhost == "" {
			t.Fatalf("%q: %+v", target, got)
		}
	})
}

// chatAndSeq is the chat of an upsert(i)'s body and its i.
func chatAndSeq(t *testing.T, body []byte) (string, int) {
	t.Helper()
	var ev struct {
		Chat       string `json:"chat"`
		WhatsAppID string `json:"whatsapp_id"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	seq, err := strconv.Atoi(strings.TrimPrefix(ev.WhatsAppID, "IN"))
	if err != nil {
		t.Fatalf("whatsapp_id %q", ev.WhatsAppID)
	}
	return ev.Chat, seq
}
