package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/fakes"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// Fakes of the API's ports: the handlers are tested through HTTP against
// them; the parts behind the ports have their own tests.

const (
	testAPIKey     = "api-key-0123456789"
	testAdminToken = "admin-token-0123456789"
)

var masterKey = testutil.TestKey()

// fakeScheduleStart is when the fake queue expects its first Queued item
// to go.
var fakeScheduleStart = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// fakeMessages records what is submitted and answers each message with
// status (Queued when empty).
type fakeMessages struct {
	status    bridge.Status
	submitErr error
	mu        sync.Mutex
	submitted []sendqueue.Request
	stored    map[string]sendqueue.Outcome

	log     []bridge.Message // what Get and List find
	filters []sendqueue.Filter
	listErr error
	next    string
}

func (f *fakeMessages) Submit(_ context.Context, req sendqueue.Request) (sendqueue.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.submitErr != nil {
		return sendqueue.Result{}, f.submitErr
	}
	if stored, ok := f.stored[req.IdempotencyKey]; ok && req.IdempotencyKey != "" {
		return sendqueue.Result{Replay: true, Stored: &stored}, nil
	}
	f.submitted = append(f.submitted, req)
	status := f.status
	if status == "" {
		status = bridge.StatusQueued
	}
	var res sendqueue.Result
	for i, it := range req.Items {
		m := bridge.Message{ID: "m" + string(rune('0'+i)), WhatsAppID: "W" + string(rune('0'+i)),
			Recipient: req.Recipient, Type: it.Type, Status: status}
		var place sendqueue.Place
		switch status {
		case bridge.StatusQueued:
			place = sendqueue.Place{Position: i + 1, ScheduledAt: fakeScheduleStart.Add(time.Duration(i) * 3 * time.Second)}
		case bridge.StatusFailed:
			m.LastError = bridge.FailNotOnWhatsApp
		default: // sent at once: no place, no error
		}
		res.Messages, res.Places = append(res.Messages, m), append(res.Places, place)
	}
	return res, nil
}

func (f *fakeMessages) StoreOutcome(_ context.Context, key string, resp sendqueue.Outcome) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stored == nil {
		f.stored = map[string]sendqueue.Outcome{}
	}
	f.stored[key] = resp
	return nil
}

func (f *fakeMessages) Get(_ context.Context, id string) (bridge.Message, error) {
	for _, m := range f.log {
		if m.ID == id {
			return m, nil
		}
	}
	if f.listErr != nil {
		return bridge.Message{}, f.listErr
	}
	return bridge.Message{}, bridge.Errorf(bridge.KindNotFound, "not_found", "no such message")
}

func (f *fakeMessages) List(_ context.Context, filter sendqueue.Filter) ([]bridge.Message, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.filters = append(f.filters, filter)
	if f.listErr != nil {
		return nil, "", f.listErr
	}
	return f.log, f.next, nil
}

// fakeAnalytics returns one day per requested day, counting from 1.
type fakeAnalytics struct {
	err       error
	gotNow    time.Time
	gotDays   int
	callCount int
}

func (f *fakeAnalytics) DeliveryDays(_ context.Context, now time.Time, days int) ([]bridge.DeliveryDay, error) {
	f.gotNow, f.gotDays, f.callCount = now, days, f.callCount+1
	if f.err != nil {
		return nil, f.err
	}
	out := sendqueue.DeliveryDays(now, days)
	for i := range out {
		out[i].Success, out[i].Failed = int64(i+1), int64(i)
	}
	return out, nil
}

// fakeDeadLetters behaves as the outbox's dead-letter store: Redeliver
// makes a dead letter pending, and it is no longer listed.
type fakeDeadLetters struct {
	mu   sync.Mutex
	dead []webhook.DeadLetter
	err  error // of both methods, when set
}

func (f *fakeDeadLetters) Failed(context.Context) ([]webhook.DeadLetter, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]webhook.DeadLetter{}, f.dead...), f.err
}

func (f *fakeDeadLetters) Redeliver(_ context.Context, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	for i, d := range f.dead {
		if d.ID == id {
			f.dead = append(f.dead[:i], f.dead[i+1:]...)
			return nil
		}
	}
	if id == 7 { // a known event that is pending or delivered
		return webhook.ErrNotDead
	}
	return webhook.ErrUnknown
}

// openAuditLog opens a real audit log in a temporary directory.
func openAuditLog(t *testing.T, now func() time.Time) *audit.Trail {
	t.Helper()
	l, err := audit.Open(filepath.Join(t.TempDir(), "audit"), masterKey, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// newTestServer serves d.router() on loopback; a nil Session is a
// disconnected one, an empty Audit a real audit log in a temporary directory.
func newTestServer(t *testing.T, d testDeps) *httptest.Server {
	t.Helper()
	srv := newUnstartedTestServer(t, d)
	srv.Start()
	return srv
}

// newUnstartedTestServer is newTestServer for a test that sets the
// server's listener or hooks before it starts.
func newUnstartedTestServer(t *testing.T, d testDeps) *httptest.Server {
	t.Helper()
	if d.Session == nil {
		d.Session = &fakes.Session{Link: bridge.SessionStatus{State: "disconnected"}}
	}
	if d.Audit.Trail == nil {
		d.Audit = AuditRecorder{Trail: openAuditLog(t, d.Now), Logger: logr.Discard()}
	}
	if d.Guard == nil {
		// The matrices present many wrong credentials from one address;
		// the tests of the limit itself set the real guard.
		d.Guard = guard.NewCredentialsAllowing(d.Audit, d.Now, 1000)
	}
	if d.AdminToken == "" {
		d.AdminToken = testAdminToken
	}
	if d.Send.APIKey == "" {
		d.Send.APIKey = testAPIKey
	}
	srv := httptest.NewUnstartedServer(d.router())
	t.Cleanup(srv.Close)
	return srv
}

// call sends a request with the headers given as "Name: value" and returns
// the status and the body.
func call(t *testing.T, method, url string, body io.Reader, headers ...string) (int, string) {
	t.Helper()
	resp := do(t, method, url, body, headers...)
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(raw)
}

func do(t *testing.T, method, url string, body io.Reader, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ": ")
		req.Header.Set(name, value)
	}
	// Every call is checked against the API description, except the
	// dashboard's pages, which the description names but does not describe.
	client := apitest.Client(t)
	if strings.Contains(req.URL.Path, "/dashboard") {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// errorCode is the code of an error-shaped body; it fails the test for any
// other body.
func errorCode(t *testing.T, body string) string {
	t.Helper()
	var b ErrorBody
	if err := json.Unmarshal([]byte(body), &b); err != nil || b.Error.Code == "" || b.Error.Message == "" {
		t.Fatalf("not the error shape: %s", body)
	}
	return b.Error.Code
}

const adminHeader = "X-Admin-Token: " + testAdminToken
