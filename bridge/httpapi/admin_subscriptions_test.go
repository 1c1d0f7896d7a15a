package httpapi

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/admin"
	"github.com/msgbridge/msgbridge/bridge/inbox"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// subsEnv is the API over a real, running outbox on a real bridge.db.
type subsEnv struct {
	srv    *httptest.Server
	outbox *webhook.Outbox
	inbox  *inbox.Inbox
	batch  *sqlite.Batcher
	audit  *audit.Trail
	db     *sql.DB
}

func newSubsEnv(t *testing.T) *subsEnv {
	t.Helper()
	db := testutil.OpenBridgeDB(t)
	b := sqlite.NewBatcher(db)
	t.Cleanup(b.Close)
	o := webhook.New(webhook.Options{DB: db, Batcher: b, Log: logr.Discard(), LocalTargets: true})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = o.Run(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })
	e := &subsEnv{outbox: o, batch: b, audit: openAuditLog(t, time.Now), db: db}
	e.inbox = inbox.New(inbox.Options{DB: db, Batcher: b, Webhooks: o, Retention: time.Hour})
	e.srv = newTestServer(t, testDeps{Subscriptions: o, Events: o, Inbox: e.inbox, Messages: &fakeMessages{},
		Audit: AuditRecorder{Trail: e.audit, Logger: logr.Discard()}})
	return e
}

func (e *subsEnv) call(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	return call(t, method, e.srv.URL+path, strings.NewReader(body), adminHeader, "Content-Type: application/json")
}

// countingReceiver is a real webhook receiver that counts what it accepts
// and checks every request against the API description.
func countingReceiver(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		body := make([]byte, r.ContentLength)
		_, _ = r.Body.Read(body)
		apitest.ValidateWebhookRequest(t, r, body)
		if r.Header.Get("X-Team") == "crm" && r.Header.Get("webhook-signature") != "" {
			n.Add(1)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

const testWhsec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// The whole life of a subscription through the API, as the operator drives
// it: create, list with health (no secret), PUT twice (idempotent),
// deliveries with its headers and signature, replay to it, delete twice.
func TestSubscriptionLifecycle(t *testing.T) {
	e := newSubsEnv(t)
	recv, got := countingReceiver(t)
	body := `{"id":"crm","target":"` + recv.URL + `","events":["message.upsert"],"secret":"` + testWhsec + `","headers":{"x-team":"crm"}}`
	if status, answer := e.call(t, "POST", "/api/admin/subscriptions", body); status != http.StatusCreated ||
		strings.Contains(answer, "whsec_") || !strings.Contains(answer, `"secret_set":true`) {
		t.Fatalf("create: %d %s", status, answer)
	}
	if status, answer := e.call(t, "POST", "/api/admin/subscriptions", body); status != http.StatusConflict || errorCode(t, answer) != "subscription_exists" {
		t.Errorf("create twice: %d %s", status, answer)
	}
	put := `{"target":"` + recv.URL + `","events":["message.upsert"],"secret":"` + testWhsec + `","headers":{"x-team":"crm"}}`
	for want := range []int{http.StatusCreated, http.StatusOK} {
		status, answer := e.call(t, "PUT", "/api/admin/subscriptions/k8s-crm", put)
		if status != []int{http.StatusCreated, http.StatusOK}[want] {
			t.Errorf("put %d: %d %s", want, status, answer)
		}
	}
	in := bridge.Incoming{WhatsAppID: "W1", From: knownSender, Chat: knownSender, Type: "text", Text: "hi", Timestamp: time.Now()}
	if err := e.batch.Do(context.Background(), func(tx *sql.Tx) error { return e.inbox.Store(context.Background(), tx, in) }); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 10*time.Second, func() (int64, bool) { return got.Load(), got.Load() == 2 }, "signed deliveries with X-Team")
	// The receiver counts a delivery before the outbox commits it: a replay
	// before that commit finds the event still pending.
	testutil.Poll(t, 10*time.Second, func() (int, bool) {
		st, _ := e.outbox.Get(context.Background(), "crm")
		return st.Health.Pending, st.Health.Pending == 0 && !st.Health.LastSuccess.IsZero()
	}, "crm's delivery committed")
	status, answer := e.call(t, "POST", "/api/admin/webhooks/replay?since=2020-01-01T00:00:00Z&subscription=crm", "")
	if status != http.StatusOK || !strings.Contains(answer, `"enqueued":1`) {
		t.Errorf("replay to crm: %d %s", status, answer)
	}
	testutil.Poll(t, 10*time.Second, func() (int64, bool) { return got.Load(), got.Load() == 3 }, "the replay, to crm only")
	if status, answer := e.call(t, "POST", "/api/admin/webhooks/replay?since=2020-01-01T00:00:00Z&subscription=nope", ""); status != http.StatusNotFound ||
		errorCode(t, answer) != "subscription_not_found" {
		t.Errorf("replay to an unknown one: %d %s", status, answer)
	}
	var list []admin.SubscriptionJSON
	status, answer = e.call(t, "GET", "/api/admin/subscriptions", "")
	if err := json.Unmarshal([]byte(answer), &list); err != nil || status != http.StatusOK || len(list) != 2 ||
		strings.Contains(answer, "whsec_") || list[0].ID != "crm" || list[0].Health.LastSuccessAt == nil {
		t.Errorf("list: %d %s", status, answer)
	}
	for range 2 {
		if status, answer := e.call(t, "DELETE", "/api/admin/subscriptions/k8s-crm", ""); status != http.StatusOK {
			t.Errorf("delete: %d %s", status, answer)
		}
	}
	if status, answer := e.call(t, "GET", "/api/admin/subscriptions/k8s-crm", ""); status != http.StatusNotFound ||
		errorCode(t, answer) != "subscription_not_found" {
		t.Errorf("get deleted: %d %s", status, answer)
	}
	if status, answer := e.call(t, "DELETE", "/api/admin/subscriptions/default", ""); status != http.StatusConflict ||
		errorCode(t, answer) != "subscription_managed" {
		t.Errorf("delete default: %d %s", status, answer)
	}
	e.checkAudited(t, map[audit.Action]int{audit.ActionSubscriptionCreate: 2, audit.ActionSubscriptionPut: 2, audit.ActionSubscriptionDelete: 3})
}

func (e *subsEnv) checkAudited(t *testing.T, want map[audit.Action]int) {
	t.Helper()
	entries, err := e.audit.List(context.Background(), audit.WeekOf(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	got := map[audit.Action]int{}
	for _, a := range entries {
		got[a.Action]++
	}
	for action, n := range want {
		if got[action] != n {
			t.Errorf("%s audited %d times, want %d", action, got[action], n)
		}
	}
}

// Bad requests are refused with 400 and their own code, and nothing is
// stored.
func TestSubscriptionRefusals(t *testing.T) {
	e := newSubsEnv(t)
	recv, _ := countingReceiver(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	for _, c := range []struct{ body, code string }{
		{`{"target":"` + recv.URL + `"}`, "invalid_subscription_id"},
		{`{"id":"Crm","target":"` + recv.URL + `"}`, "invalid_subscription_id"},
		{`{"id":"a","target":"ftp://x/y"}`, "invalid_target"},
		{`{"id":"a","target":"amqp://rabbitmq.example/?exchnage=events"}`, "invalid_target_option"},
		{`{"id":"a","target":"amqp://rabbitmq.example/","credentials":{"token":"t"}}`, "invalid_credentials"},
		{`{"id":"a","target":"` + recv.URL + `","events":["message.nope"]}`, "unknown_event_type"},
		{`{"id":"a","target":"` + recv.URL + `","format":"xml"}`, "unknown_format"},
		{`{"id":"a","target":"` + recv.URL + `","format":"cloud"}`, "format_unavailable"},
		{`{"id":"a","target":"` + recv.URL + `","headers":{"content-type":"text/plain"}}`, "forbidden_header"},
		{`{"id":"a","target":"` + recv.URL + `","secret":"hunter2"}`, "invalid_secret"},
		{`{"id":"a","target":"` + recv.URL + `","credentials":{"token":"t"}}`, "invalid_credentials"},
		{`{"id":"a","target":"` + deadURL + `"}`, "target_unreachable"},
		{`{"id":"a","target":"` + recv.URL + `","extra":1}`, "invalid_json"},
	} {
		status, answer := e.call(t, "POST", "/api/admin/subscriptions", c.body)
		if status != http.StatusBadRequest || errorCode(t, answer) != c.code {
			t.Errorf("%s: %d %s, want 400 %s", c.body, status, answer, c.code)
		}
	}
	if status, answer := e.call(t, "PUT", "/api/admin/subscriptions/b", `{"id":"c","target":"`+recv.URL+`"}`); status != 400 ||
		errorCode(t, answer) != "invalid_subscription_id" {
		t.Errorf("ids differ: %d %s", status, answer)
	}
	if status, answer := e.call(t, "PUT", "/api/admin/subscriptions/default", `{"target":"`+recv.URL+`"}`); status != 409 ||
		errorCode(t, answer) != "subscription_managed" {
		t.Errorf("put default: %d %s", status, answer)
	}
	if status, answer := e.call(t, "GET", "/api/admin/subscriptions", ""); status != 200 || answer != "[]\n" {
		t.Errorf("stored anyway: %s", answer)
	}
	if status, _ := call(t, "GET", e.srv.URL+"/api/admin/subscriptions", nil); status != http.StatusUnauthorized {
		t.Errorf("without a token: %d", status)
	}
}

// The operator renders spec.subscriptions through this API with the wire
// types of package contract: a PUT of contract.Subscription is taken, and
// the list reads back as []contract.SubscriptionView with its health.
func TestOperatorWireTypesMatchTheAPI(t *testing.T) {
	e := newSubsEnv(t)
	recv, _ := countingReceiver(t)
	put, err := json.Marshal(contract.Subscription{
		ID: contract.OperatorSubscriptionPrefix + "crm", Target: recv.URL, Events: []string{"message.upsert"},
		Format: "standard", Secret: testWhsec, Headers: map[string]string{"x-team": "crm"}, Enabled: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if status, answer := e.call(t, "PUT", contract.AdminSubscriptionsPath+"/k8s-crm", string(put)); status != http.StatusCreated {
		t.Fatalf("the operator's PUT: %d %s", status, answer)
	}
	status, answer := e.call(t, "GET", contract.AdminSubscriptionsPath, "")
	var views []contract.SubscriptionView
	if err := json.Unmarshal([]byte(answer), &views); err != nil || status != http.StatusOK {
		t.Fatalf("the list as the operator reads it: %d %v %s", status, err, answer)
	}
	for _, v := range views {
		if v.ID == "k8s-crm" {
			if v.Target != recv.URL || v.Health.State != contract.SubscriptionHealthy || v.Secret != "" {
				t.Errorf("read back: %+v", v)
			}
			return
		}
	}
	t.Errorf("k8s-crm not listed: %s", answer)
}

// natsWithToken is a real nats-server with JetStream that takes only
// token, and a stream over prefix.>, as a nats:// subscription's target
// needs; its URL with prefix.
func natsWithToken(t *testing.T, token, prefix string) string {
	t.Helper()
	srv, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		Authorization: token, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	nc, err := nats.Connect(srv.ClientURL(), nats.Token(token))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{prefix + ".>"}}); err != nil {
		t.Fatal(err)
	}
	return srv.ClientURL() + "/" + prefix
}

// The operator renders a nats:// subscription's credentials as the
// contract's credentials: the bridge takes them (its probe logs in to a
// real server that wants the token with them, and refuses the PUT with a
// wrong one), keeps them and never answers them back.
func TestOperatorNATSCredentialsMatchTheAPI(t *testing.T) {
	e := newSubsEnv(t)
	target := natsWithToken(t, "s3cret-token", "wa")
	put := func(token string) (int, string) {
		t.Helper()
		body, err := json.Marshal(contract.Subscription{ID: "k8s-bus", Target: target, Events: []string{}, Format: "standard",
			Credentials: &contract.SubscriptionCredentials{Token: token}, Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		return e.call(t, "PUT", contract.AdminSubscriptionsPath+"/k8s-bus", string(body))
	}
	if status, answer := put("wrong"); status != http.StatusBadRequest || errorCode(t, answer) != "target_unreachable" {
		t.Fatalf("a PUT with a token the server refuses: %d %s", status, answer)
	}
	if status, answer := put("s3cret-token"); status != http.StatusCreated {
		t.Fatalf("the operator's PUT with the server's token: %d %s", status, answer)
	}
	status, answer := e.call(t, "GET", contract.AdminSubscriptionsPath+"/k8s-bus", "")
	var view struct {
		CredentialsSet bool `json:"credentials_set"`
	}
	if err := json.Unmarshal([]byte(answer), &view); err != nil || status != http.StatusOK || !view.CredentialsSet || strings.Contains(answer, "s3cret") {
		t.Errorf("read back: %d %v %s", status, err, answer)
	}
}

// Header names are the caller's, in any case HTTP reads them ("X-Team",
// "Authorization", as the CRD and the README write them): they are taken
// and kept canonical, two that differ only in case are refused, and their
// values (a bearer token) are never listed back.
func TestSubscriptionHeaderNamesAnyCaseValuesWriteOnly(t *testing.T) {
	e := newSubsEnv(t)
	var authorized atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer tok-3141" && r.Header.Get("X-Team") == "crm" {
			authorized.Add(1)
		}
	}))
	t.Cleanup(recv.Close)
	put, err := json.Marshal(contract.Subscription{
		ID: "k8s-crm", Target: recv.URL, Events: []string{}, Format: "standard", Enabled: true,
		Headers: map[string]string{"X-Team": "crm", "authorization": "Bearer tok-3141"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if status, answer := e.call(t, "PUT", contract.AdminSubscriptionsPath+"/k8s-crm", string(put)); status != http.StatusCreated {
		t.Fatalf("upper-case header names: %d %s", status, answer)
	}
	status, answer := e.call(t, "GET", contract.AdminSubscriptionsPath, "")
	if status != http.StatusOK || strings.Contains(answer, "tok-3141") || !strings.Contains(answer, `"header_names":["Authorization","X-Team"]`) {
		t.Errorf("the list shows a header's value, or not the canonical names: %d %s", status, answer)
	}
	in := bridge.Incoming{WhatsAppID: "W1", From: knownSender, Chat: knownSender, Type: "text", Text: "hi", Timestamp: time.Now()}
	if err := e.batch.Do(context.Background(), func(tx *sql.Tx) error { return e.inbox.Store(context.Background(), tx, in) }); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 10*time.Second, func() (int64, bool) { return authorized.Load(), authorized.Load() == 1 }, "a delivery with both headers")
	twice := `{"id":"b","target":"` + recv.URL + `","headers":{"X-Team":"a","x-team":"b"}}`
	if status, answer := e.call(t, "POST", contract.AdminSubscriptionsPath, twice); status != http.StatusBadRequest || errorCode(t, answer) != "invalid_json" {
		t.Errorf("one header twice in two cases: %d %s", status, answer)
	}
	if status, answer := e.call(t, "POST", contract.AdminSubscriptionsPath, `{"ID":"c","target":"`+recv.URL+`"}`); status != http.StatusBadRequest ||
		errorCode(t, answer) != "invalid_json" {
		t.Errorf("an upper-case field name outside headers: %d %s", status, answer)
	}
}
