package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// subscribe creates subscription id to target (all events when none are
// named).
func (o testOutbox) subscribe(tb testing.TB, id, target string, events ...string) {
	tb.Helper()
	s := Subscription{ID: id, Target: target, Events: events, Enabled: true}
	if err := o.Create(context.Background(), s); err != nil {
		tb.Fatal(err)
	}
}

func upsert(i int) Event {
	return MessageUpsert(bridge.Incoming{
		WhatsAppID: "IN" + strconv.Itoa(i), From: testPhone, Chat: bridge.PhoneRecipient("4915100000" + strconv.Itoa(i%7)),
		Type: "text", Text: "hi", Timestamp: time.Now(),
	})
}

// Every subscription gets the events its filter takes, each with the one
// webhook-id; a new subscription starts from now.
func TestSubscriptionsFilterAndStartFromNow(t *testing.T) {
	def, crm, bot := newReceiver(t, true), newReceiver(t, true), newReceiver(t, true)
	o := startOutbox(t, def.srv.URL, nil)
	o.enqueue(t, connected()) // before crm and bot exist: default only
	def.waitCount(t, 1, 10*time.Second)
	o.subscribe(t, "crm", crm.srv.URL, TypeMessageUpsert)
	o.subscribe(t, "bot", bot.srv.URL)
	o.enqueue(t, upsert(1), connected())
	def.waitCount(t, 3, 10*time.Second)
	bot.waitCount(t, 2, 10*time.Second)
	crm.waitCount(t, 1, 10*time.Second)
	o.waitDrained(t, 10*time.Second)
	if n := crm.count.Load(); n != 1 {
		t.Errorf("crm (message.upsert only) got %d events, want 1", n)
	}
	id := crm.deliveries()[0].id
	if !slices.ContainsFunc(bot.deliveries(), func(d delivery) bool { return d.id == id }) {
		t.Errorf("bot did not get the event %s under crm's webhook-id", id)
	}
}

// A receiver that hangs holds only its own subscription's deliveries: the
// other subscription gets every event while the first has all its slots
// taken, and the hung one's events stay pending, not lost.
func TestHungReceiverDelaysNoOther(t *testing.T) {
	release := make(chan struct{})
	var hung sync.Once
	hang := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	t.Cleanup(func() { hung.Do(func() { close(release) }); hang.Close() })
	live := newReceiver(t, false)
	o := startOutbox(t, "", func(opt *Options) { opt.Timeout = time.Minute; opt.Workers = 2 })
	o.subscribe(t, "dead", hang.URL)
	o.subscribe(t, "live", live.srv.URL)
	const n = 40 // over 7 chats: many more than the hung subscription's slots
	for i := range n {
		o.enqueue(t, upsert(i))
	}
	live.waitCount(t, n, 20*time.Second)
	st, err := o.Get(context.Background(), "dead")
	if err != nil || st.Health.Pending != n {
		t.Errorf("hung subscription: %d pending (%v), want %d", st.Health.Pending, err, n)
	}
	hung.Do(func() { close(release) })
}

// A receiver that fails keeps its own retries and dead letters; the other
// subscription's events are delivered, and the failing one's health says
// why.
func TestFailingReceiverHasItsOwnRetries(t *testing.T) {
	bad, good := newReceiver(t, false), newReceiver(t, false)
	bad.answer.Store(http.StatusServiceUnavailable)
	o := startOutbox(t, "", nil)
	o.subscribe(t, "bad", bad.srv.URL)
	o.subscribe(t, "good", good.srv.URL)
	o.enqueue(t, upsert(1), upsert(2))
	good.waitCount(t, 2, 10*time.Second)
	testutil.Poll(t, 10*time.Second, func() (int64, bool) { n := bad.hits.Load(); return n, n >= 2 }, "attempts at bad")
	all, err := o.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Status{}
	for _, s := range all {
		byID[s.ID] = s
	}
	if h := byID["bad"].Health; h.State != HealthFailing || h.Pending != 2 || h.LastError != "receiver answered 503" {
		t.Errorf("bad: %+v", h)
	}
	testutil.Poll(t, 10*time.Second, func() (Health, bool) {
		s, _ := o.Get(context.Background(), "good")
		return s.Health, s.Health.State == HealthHealthy && s.Health.Pending == 0 && !s.Health.LastSuccess.IsZero()
	}, "good's health")
	if _, ok := byID[DefaultSubscription]; ok {
		t.Error("default listed while WEBHOOK_URL is empty and it never existed")
	}
}

// PUT keeps the delivery state while the target stays, a new target starts
// from now (the old target's pending events are dropped), a disabled
// subscription's events wait, and DELETE is idempotent.
func TestPutDisableDelete(t *testing.T) {
	first, second := newReceiver(t, true), newReceiver(t, true)
	first.answer.Store(http.StatusInternalServerError)
	o := startOutbox(t, "", nil)
	o.subscribe(t, "k8s-crm", first.srv.URL)
	o.enqueue(t, upsert(1))
	testutil.Poll(t, 10*time.Second, func() (int64, bool) { n := first.hits.Load(); return n, n >= 1 }, "first attempt")
	put := func(s Subscription) bool {
		t.Helper()
		created, err := o.Put(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		return created
	}
	if put(Subscription{ID: "k8s-crm", Target: first.srv.URL, Headers: map[string]string{"X-Team": "crm"}, Enabled: true}) {
		t.Error("a replacement reported as created")
	}
	if st, _ := o.Get(context.Background(), "k8s-crm"); st.Health.Pending != 1 {
		t.Errorf("headers changed: %d pending, want the event kept", st.Health.Pending)
	}
	put(Subscription{ID: "k8s-crm", Target: second.srv.URL, Enabled: false})
	if st, _ := o.Get(context.Background(), "k8s-crm"); st.Health.Pending != 0 || st.Health.State != HealthDisabled {
		t.Errorf("target changed and disabled: %+v", st.Health)
	}
	o.enqueue(t, upsert(2)) // disabled: not for it
	put(Subscription{ID: "k8s-crm", Target: second.srv.URL, Enabled: true})
	o.enqueue(t, upsert(3))
	second.waitCount(t, 1, 10*time.Second)
	o.waitDrained(t, 10*time.Second)
	if got := second.deliveries(); len(got) != 1 || !slices.ContainsFunc(got, func(d delivery) bool { return d.id != "" }) {
		t.Errorf("second target got %d events, want only the one after it was enabled", len(got))
	}
	for range 2 {
		if _, err := o.Delete(context.Background(), "k8s-crm"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := o.Get(context.Background(), "k8s-crm"); !errors.Is(err, ErrNoSubscription) {
		t.Errorf("after delete: %v", err)
	}
	if _, err := o.Delete(context.Background(), DefaultSubscription); !errors.Is(err, ErrManaged) {
		t.Errorf("delete default: %v", err)
	}
}

// WEBHOOK_URL is the subscription default at every start: its backlog from
// before subscriptions existed stays its own, and an empty URL disables it
// without dropping what waits.
func TestDefaultFollowsTheSettings(t *testing.T) {
	r := newReceiver(t, false)
	o := openOutbox(t, r.srv.URL, nil)
	o.enqueue(t, connected())
	again := New(Options{DB: o.opts.DB, Batcher: o.batcher, URL: "", Log: o.opts.Log, LocalTargets: true})
	st, err := again.Get(context.Background(), DefaultSubscription)
	if err != nil || st.Enabled || st.Health.Pending != 1 || again.Enabled() {
		t.Fatalf("URL emptied: %+v %v", st, err)
	}
	back := New(Options{DB: o.opts.DB, Batcher: o.batcher, URL: r.srv.URL, Log: o.opts.Log, LocalTargets: true})
	(testOutbox{Outbox: back, batcher: o.batcher}).run(t)
	r.waitCount(t, 1, 10*time.Second)
}

// Bad subscriptions are refused with their own codes.
func TestSubscriptionValidation(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Subscription
		code string
	}{
		{"id", Subscription{ID: "Bad_ID", Target: "http://x"}, "invalid_subscription_id"},
		{"scheme", Subscription{ID: "a", Target: "ftp://x/y"}, "invalid_target"},
		{"no host", Subscription{ID: "a", Target: "http:///x"}, "invalid_target"},
		{"user info", Subscription{ID: "a", Target: "https://u:p@x/y"}, "invalid_target"},
		{"nats without prefix", Subscription{ID: "a", Target: "nats://x:4222"}, "invalid_target"},
		{"nats wildcard", Subscription{ID: "a", Target: "nats://x:4222/a.*"}, "invalid_target"},
		{"event", Subscription{ID: "a", Target: "http://x", Events: []string{"message.nope"}}, "unknown_event_type"},
		{"format", Subscription{ID: "a", Target: "http://x", Format: "xml"}, "unknown_format"},
		{"cloud", Subscription{ID: "a", Target: "http://x", Format: "cloud"}, "format_unavailable"},
		{"header", Subscription{ID: "a", Target: "http://x", Headers: map[string]string{"Webhook-Id": "x"}}, "forbidden_header"},
		{"host header", Subscription{ID: "a", Target: "http://x", Headers: map[string]string{"host": "x"}}, "forbidden_header"},
		{"header value", Subscription{ID: "a", Target: "http://x", Headers: map[string]string{"X-A": "a\r\nb"}}, "forbidden_header"},
		{"header twice", Subscription{ID: "a", Target: "http://x", Headers: map[string]string{"x-a": "1", "X-A": "2"}}, "forbidden_header"},
		{"http credentials", Subscription{ID: "a", Target: "http://x", Credentials: Credentials{Token: "t"}}, "invalid_credentials"},
		{"nats half", Subscription{ID: "a", Target: "nats://x:4222/p", Credentials: Credentials{User: "u"}}, "invalid_credentials"},
	} {
		err := c.s.Validate()
		if be, ok := errors.AsType[*bridge.Error](err); !ok || be.Code != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	ok := Subscription{ID: "k8s-a", Target: "nats://nats:4222/msgbridge.events", Credentials: Credentials{User: "u", Password: "p"}}
	if err := ok.Validate(); err != nil || ok.Format != FormatStandard {
		t.Errorf("valid: %v, format %q", err, ok.Format)
	}
	named := Subscription{ID: "a", Target: "http://x", Headers: map[string]string{"x-team": "a", "AUTHORIZATION": "b"}}
	if err := named.Validate(); err != nil || named.Headers["X-Team"] != "a" || named.Headers["Authorization"] != "b" || len(named.Headers) != 2 {
		t.Errorf("header names are kept canonical: %v %v", err, named.Headers)
	}
}

// handshakeFormat is a format whose receivers expect a handshake, as the
// Cloud door's cloud format is.
type handshakeFormat struct{ standardFormat }

func (handshakeFormat) Verify(context.Context, Subscription) error { return nil }

// A format that performs a handshake takes its token as credentials.token
// on an HTTP target (Chatwoot checks its own verify token); user and
// password, or a token for a format without a handshake, stay refused.
func TestHandshakeTokenOnHTTPTargets(t *testing.T) {
	RegisterFormat("handshake-test", handshakeFormat{})
	ok := Subscription{ID: "cw", Target: "https://chatwoot.example/webhooks/whatsapp/+4915100000001", Format: "handshake-test",
		Credentials: Credentials{Token: "cw-verify"}}
	if err := ok.Validate(); err != nil {
		t.Errorf("a verify token: %v", err)
	}
	for _, s := range []Subscription{
		{ID: "a", Target: "http://x", Format: "handshake-test", Credentials: Credentials{User: "u", Password: "p"}},
		{ID: "a", Target: "http://x", Format: FormatStandard, Credentials: Credentials{Token: "t"}},
		{ID: "a", Target: "http://x", Format: "handshake-test", Credentials: Credentials{Token: strings.Repeat("t", 5000)}},
	} {
		if be, ok := errors.AsType[*bridge.Error](s.Validate()); !ok || be.Code != "invalid_credentials" {
			t.Errorf("%+v: %v, want invalid_credentials", s.Credentials, be)
		}
	}
}

// An unreachable target is refused at creation.
func TestUnreachableTargetIsRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	o := openOutbox(t, "", nil)
	err := o.Create(context.Background(), Subscription{ID: "gone", Target: url, Format: FormatStandard, Enabled: true})
	if be, ok := errors.AsType[*bridge.Error](err); !ok || be.Code != "target_unreachable" {
		t.Fatalf("%v, want target_unreachable", err)
	}
	// The connection's detail would map the pod's network to the caller.
	if be, _ := errors.AsType[*bridge.Error](err); strings.Contains(be.Message, "refused") || strings.Contains(be.Message, "dial") {
		t.Errorf("the answer tells how the connection failed: %s", be.Message)
	}
	if _, err := o.Get(context.Background(), "gone"); !errors.Is(err, ErrNoSubscription) {
		t.Errorf("stored anyway: %v", err)
	}
}

// Without LocalTargets (WEBHOOK_LOCAL_TARGETS off, the default) a target on
// a loopback or link-local address is refused at creation, by name or by
// address, and a delivery to one (WEBHOOK_URL's) never connects.
func TestLocalTargetsAreRefused(t *testing.T) {
	r := newReceiver(t, false)
	o := openOutbox(t, r.srv.URL, func(opts *Options) { opts.LocalTargets = false })
	o.run(t)
	port := r.srv.URL[strings.LastIndex(r.srv.URL, ":"):]
	for _, target := range []string{r.srv.URL, "http://localhost" + port, "http://169.254.169.254/latest/meta-data/",
		"http://[::1]" + port, "http://0.0.0.0" + port, "nats://127.0.0.1" + port + "/events", "amqp://127.0.0.1" + port + "/"} {
		err := o.Create(context.Background(), Subscription{ID: "local", Target: target, Enabled: true})
		if be, ok := errors.AsType[*bridge.Error](err); !ok || be.Code != "target_not_allowed" {
			t.Errorf("%s: %v, want target_not_allowed", target, err)
		}
	}
	if err := o.EnqueueNow(context.Background(), SessionStatus(bridge.SessionStatus{State: "connected"}, time.Now())); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 10*time.Second, func() (string, bool) {
		st, _ := o.Get(context.Background(), DefaultSubscription)
		return st.Health.LastError, strings.Contains(st.Health.LastError, "loopback or link-local")
	}, "the default's delivery to a loopback receiver refused")
	if n := r.hits.Load(); n != 0 {
		t.Errorf("the loopback receiver got %d deliveries", n)
	}
}

func FuzzSubscriptionValidate(f *testing.F) {
	for _, seed := range []string{"http://x/y", "nats://h:4222/p.q", "amqp://h/v?exchange=e&prefix=p", "amqp://h/?x=y", "ftp://x", "nats://h/", "https://u@h/", "%zz", ""} {
		f.Add(seed, "message.upsert", "X-A")
	}
	f.Fuzz(func(t *testing.T, target, event, header string) {
		s := Subscription{ID: "a", Target: target, Events: []string{event}, Headers: map[string]string{header: "v"}}
		err := s.Validate()
		if err == nil {
			return
		}
		if _, ok := errors.AsType[*bridge.Error](err); !ok {
			t.Fatalf("%q: %v is not a *bridge.Error", target, err)
		}
	})
}

// The scans never read the backlog of a subscription whose slots are all
// held by a hung receiver: the live subscription's events, one at a time,
// cost a read of about their own rows, however long the dead one's backlog
// grows (each scan read all of it, and the live latency grew with it).
func TestScansSkipAHungSubscriptionsBacklog(t *testing.T) {
	release := make(chan struct{})
	var arrivedAtHung atomic.Int64
	hang := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { arrivedAtHung.Add(1); <-release }))
	t.Cleanup(func() { close(release); hang.Close() })
	live := newReceiver(t, false)
	const workers, backlog, events = 2, 50, 20
	o := startOutbox(t, "", func(opt *Options) { opt.Timeout = time.Minute; opt.Workers = workers })
	o.subscribe(t, "dead", hang.URL)
	o.subscribe(t, "live", live.srv.URL)
	for i := range backlog {
		o.enqueue(t, upsert(i))
	}
	live.waitCount(t, backlog, 20*time.Second)
	testutil.Poll(t, 10*time.Second, func() (int64, bool) { n := arrivedAtHung.Load(); return n, n == workers }, "requests at the hung receiver")
	before := o.rowsRead.Load()
	for i := range events {
		o.enqueue(t, MessageStatus("L"+strconv.Itoa(i), testPhone, bridge.StatusSent, time.Now()))
		live.waitCount(t, int64(backlog+i+1), 10*time.Second)
	}
	// About their own rows: a scan woken when a receiver answered may read
	// the row once more while its mark commits, so up to three reads each;
	// reading the backlog would cost 50 a scan.
	if read := o.rowsRead.Load() - before; read > 3*events {
		t.Errorf("the scans read %d rows for %d live events beside a backlog of %d", read, events, backlog)
	}
}
