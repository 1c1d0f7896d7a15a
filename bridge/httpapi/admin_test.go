package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/logging"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

var saturday = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) // 2026-W47

// env is a bridge's admin surface on real files: daily logs and the audit
// log in a temporary DATA_DIR, served by a real HTTP server through the
// API's router; analytics and webhooks are fakes of their ports.
type env struct {
	srv       *httptest.Server
	clock     *clocktesting.FakeClock
	log       logr.Logger
	files     *logging.Files
	logsDir   string
	audit     *audit.Trail
	analytics *fakeAnalytics
	webhooks  *fakeDeadLetters
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{clock: clocktesting.NewFakeClock(saturday), logsDir: filepath.Join(root, "logs"),
		analytics: &fakeAnalytics{}, webhooks: &fakeDeadLetters{}}
	var err error
	e.log, e.files, err = logging.New(logging.Options{Dir: e.logsDir, Level: logging.LevelInfo, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.files.Close() })
	e.audit = openAuditLog(t, e.clock.Now)
	e.srv = newTestServer(t, testDeps{
		Now: e.clock.Now, Audit: AuditRecorder{Trail: e.audit, Logger: e.log}, LogFiles: e.files,
		Analytics: e.analytics, Webhooks: e.webhooks, Log: e.log,
	})
	return e
}

// do sends a request with the admin token and returns the status and the
// body.
func (e *env) do(t *testing.T, method, path string) (int, []byte) {
	t.Helper()
	status, body := call(t, method, e.srv.URL+path, nil, adminHeader,
		"X-Forwarded-For: 203.0.113.9") // must not be believed
	return status, []byte(body)
}

func (e *env) auditEntries(t *testing.T, week audit.Week) []audit.Entry {
	t.Helper()
	entries, err := e.audit.List(context.Background(), week)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestInvalidInputIs400WithItsCode(t *testing.T) {
	e := newEnv(t)
	e.log.Info("keep me") // 2026-11-21.info.log exists and must survive every refused purge
	tests := []struct {
		method, path, code string
	}{
		{"GET", "/api/admin/analytics/delivery?days=0", "invalid_days"},
		{"GET", "/api/admin/analytics/delivery?days=-1", "invalid_days"},
		{"GET", "/api/admin/analytics/delivery?days=367", "invalid_days"},
		{"GET", "/api/admin/analytics/delivery?days=abc", "invalid_days"},
		{"GET", "/api/admin/analytics/delivery?days=", "invalid_days"},
		{"GET", "/api/admin/analytics/delivery?days=7&days=8", "invalid_query"},
		{"GET", "/api/admin/analytics/delivery?day=7", "invalid_query"},
		{"DELETE", "/api/admin/logs?date=2026-02-30&level=info", "invalid_date"},
		{"DELETE", "/api/admin/logs?date=2026-11-21&level=trace", "invalid_level"},
		{"DELETE", "/api/admin/logs?date=2026%2F11%2F21&level=info", "invalid_date"},
		{"DELETE", "/api/admin/logs?date=..%2F..%2Fbridge.db&level=info", "invalid_date"},
		{"DELETE", "/api/admin/logs?date=2026-11-21&level=info.log", "invalid_level"},
		{"DELETE", "/api/admin/logs?date=2026-11-21&level=..%2Finfo", "invalid_level"},
		{"DELETE", "/api/admin/logs?date=2026-11-21", "invalid_level"},
		{"DELETE", "/api/admin/logs?level=info", "invalid_date"},
		{"DELETE", "/api/admin/logs?date=2026-11-21&level=info&x=1", "invalid_query"},
		{"DELETE", "/api/admin/logs?date=2026-11-21&level=info&level=warn", "invalid_query"},
		{"DELETE", "/api/admin/logs?date=2026-11-21&level=info&%zz", "invalid_query"},
		{"GET", "/api/admin/audit?week=2026-W60", "invalid_week"},
		{"GET", "/api/admin/audit?week=2021-W53", "invalid_week"},
		{"GET", "/api/admin/audit?week=2026-W47&extra=1", "invalid_query"},
		{"GET", "/api/admin/audit?week=..%2F2026-W47", "invalid_week"},
		{"DELETE", "/api/admin/audit/1?week=2026-W60", "invalid_week"},
		{"DELETE", "/api/admin/audit/1?week=2021-W53", "invalid_week"},
		{"DELETE", "/api/admin/audit/1", "invalid_week"},
		{"DELETE", "/api/admin/audit/1?week=2026-W47&x=1", "invalid_query"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			status, body := e.do(t, tt.method, tt.path)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", status, body)
			}
			if code := errorCode(t, string(body)); code != tt.code {
				t.Errorf("code %q, want %q", code, tt.code)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(e.logsDir, "2026-11-21.info.log")); err != nil {
		t.Errorf("a refused purge touched the log: %v", err)
	}
}

// Record IDs are opaque: one the week does not hold is a 404, whatever its
// form (before, a malformed one such as no-such-record was a 400). Nothing
// is deleted, and the refusal is audited.
func TestAuditDeleteUnknownIDIs404(t *testing.T) {
	e := newEnv(t)
	kept, err := e.audit.Record(context.Background(), audit.Entry{Action: audit.ActionLogout, Outcome: audit.OutcomeSuccess})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"no-such-record", "1.5", "1..2", "0", "01", "abc", "999"} {
		status, body := e.do(t, "DELETE", "/api/admin/audit/"+id+"?week=2026-W47")
		if status != http.StatusNotFound || errorCode(t, string(body)) != "audit_record_not_found" {
			t.Errorf("DELETE %s: %d %s, want 404 audit_record_not_found", id, status, body)
		}
	}
	entries := e.auditEntries(t, audit.WeekOf(saturday))
	if entries[0].ID != kept {
		t.Errorf("the kept record is gone: %v", entries)
	}
	if last := entries[len(entries)-1]; last.Action != audit.ActionAuditDelete || last.Outcome != audit.OutcomeNotFound ||
		last.Detail != "week=2026-W47 id=999" {
		t.Errorf("last audit record %+v", last)
	}
}

func TestLogPurge(t *testing.T) {
	e := newEnv(t)
	e.clock.SetTime(saturday.AddDate(0, 0, -1))
	e.log.Info("yesterday")
	e.clock.SetTime(saturday)
	e.log.Info("today")
	logging.Warn(e.log, "today, warn")
	path := func(name string) string { return filepath.Join(e.logsDir, name) }

	status, body := e.do(t, "DELETE", "/api/admin/logs?date=2026-11-20&level=info")
	if status != http.StatusOK || string(body) != `{"date":"2026-11-20","level":"info","deleted":true}`+"\n" {
		t.Fatalf("purge: %d %s", status, body)
	}
	if _, err := os.Stat(path("2026-11-20.info.log")); !os.IsNotExist(err) {
		t.Errorf("yesterday's info file still there: %v", err)
	}
	for _, kept := range []string{"2026-11-21.info.log", "2026-11-21.warn.log"} {
		if _, err := os.Stat(path(kept)); err != nil {
			t.Errorf("%s: %v", kept, err)
		}
	}

	// Today's file, still being written: the next line recreates it.
	if status, body := e.do(t, "DELETE", "/api/admin/logs?date=2026-11-21&level=info"); status != http.StatusOK {
		t.Fatalf("purge today: %d %s", status, body)
	}
	e.log.Info("after the purge")
	if got, err := os.ReadFile(path("2026-11-21.info.log")); err != nil || !bytes.Contains(got, []byte("after the purge")) ||
		bytes.Contains(got, []byte(`"msg":"today"`)) {
		t.Errorf("today's file after purge: %q, %v", got, err)
	}

	status, body = e.do(t, "DELETE", "/api/admin/logs?date=2026-11-20&level=info")
	if status != http.StatusNotFound || errorCode(t, string(body)) != "log_not_found" {
		t.Errorf("second purge: %d %s", status, body)
	}
	e.do(t, "DELETE", "/api/admin/logs?date=2026-02-30&level=info")

	var got []string
	for _, a := range e.auditEntries(t, audit.WeekOf(saturday)) {
		if a.Client != "127.0.0.1" {
			t.Errorf("client %q, want 127.0.0.1 (X-Forwarded-For is not trusted)", a.Client)
		}
		got = append(got, fmt.Sprintf("%s %s %s", a.Action, a.Outcome, a.Detail))
	}
	want := []string{
		"logs.purge success date=2026-11-20 level=info",
		"logs.purge success date=2026-11-21 level=info",
		"logs.purge not_found date=2026-11-20 level=info",
		"logs.purge rejected ",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("audit\n got %q\nwant %q", got, want)
	}
}

func TestAuditListAndDelete(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	w47 := audit.WeekOf(saturday)
	first, err := e.audit.Record(ctx, audit.Entry{Action: audit.ActionPairingQR, Outcome: audit.OutcomeSuccess, Client: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}

	status, body := e.do(t, "GET", "/api/admin/audit?week=2026-W47")
	want := fmt.Sprintf(`[{"id":%q,"time":"2026-11-21T12:00:00.000Z","action":"session.pairing_qr","outcome":"success","client":"10.0.0.1"}]`+"\n", first)
	if status != http.StatusOK || string(body) != want {
		t.Fatalf("list: %d %s\nwant %s", status, body, want)
	}
	if status, body := e.do(t, "GET", "/api/admin/audit"); status != http.StatusOK || string(body) != want {
		t.Errorf("list without week (the current one): %d %s", status, body)
	}
	if status, body := e.do(t, "GET", "/api/admin/audit?week=2020-W53"); status != http.StatusOK || string(body) != "[]\n" {
		t.Errorf("list of an empty week: %d %s", status, body)
	}

	// Next week, delete last week's record: the deletion is recorded in the
	// current week, not in the one it deleted from.
	e.clock.SetTime(saturday.AddDate(0, 0, 7))
	path := fmt.Sprintf("/api/admin/audit/%s?week=2026-W47", first)
	if status, body := e.do(t, "DELETE", path); status != http.StatusOK ||
		string(body) != fmt.Sprintf(`{"id":%q,"week":"2026-W47","deleted":true}`+"\n", first) {
		t.Fatalf("delete: %d %s", status, body)
	}
	if status, body := e.do(t, "DELETE", path); status != http.StatusNotFound || errorCode(t, string(body)) != "audit_record_not_found" {
		t.Errorf("second delete: %d %s", status, body)
	}
	if got := e.auditEntries(t, w47); len(got) != 0 {
		t.Errorf("W47 after delete: %v", got)
	}
	var got []string
	for _, a := range e.auditEntries(t, audit.WeekOf(e.clock.Now())) {
		got = append(got, fmt.Sprintf("%s %s %s %s", a.Action, a.Outcome, a.Client, a.Detail))
	}
	wantAudit := []string{
		fmt.Sprintf("audit.delete success 127.0.0.1 week=2026-W47 id=%s", first),
		fmt.Sprintf("audit.delete not_found 127.0.0.1 week=2026-W47 id=%s", first),
	}
	if fmt.Sprint(got) != fmt.Sprint(wantAudit) {
		t.Errorf("W48 audit\n got %q\nwant %q", got, wantAudit)
	}
}

func TestDeliveryAnalytics(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		query string
		days  int
	}{{"", 7}, {"?days=1", 1}, {"?days=3", 3}, {"?days=366", 366}} {
		status, body := e.do(t, "GET", "/api/admin/analytics/delivery"+c.query)
		if status != http.StatusOK || e.analytics.gotDays != c.days || !e.analytics.gotNow.Equal(saturday) {
			t.Fatalf("%q: %d %s; asked for %d days at %v", c.query, status, body, e.analytics.gotDays, e.analytics.gotNow)
		}
		var out []struct {
			Day             string
			Success, Failed int64
		}
		if err := json.Unmarshal(body, &out); err != nil || len(out) != c.days || out[c.days-1].Day != "2026-11-21" {
			t.Fatalf("%q: %s, %v", c.query, body, err)
		}
	}
	_, body := e.do(t, "GET", "/api/admin/analytics/delivery?days=3")
	if want := `[{"day":"2026-11-19","success":1,"failed":0},{"day":"2026-11-20","success":2,"failed":1},` +
		`{"day":"2026-11-21","success":3,"failed":2}]` + "\n"; string(body) != want {
		t.Errorf("body %s\nwant %s", body, want)
	}
	calls := e.analytics.callCount
	e.do(t, "GET", "/api/admin/analytics/delivery?days=0")
	if e.analytics.callCount != calls {
		t.Error("an invalid request reached the analytics")
	}
	e.analytics.err = errors.New("read delivery_daily: disk I/O error")
	status, body := e.do(t, "GET", "/api/admin/analytics/delivery")
	if status != http.StatusInternalServerError || errorCode(t, string(body)) != "internal_error" || bytes.Contains(body, []byte("disk")) {
		t.Errorf("failing analytics: %d %s", status, body)
	}
}

// The handler half of the webhook outbox's dead letters (the outbox's own
// test covers the storage): listing, redelivery, unknown and live events.
func TestWebhookDeadLetters(t *testing.T) {
	e := newEnv(t)
	created := time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC)
	e.webhooks.dead = []webhook.DeadLetter{{ID: 5, Subscription: "crm", WebhookID: "msg_5", Event: "session.status", Attempts: 4,
		LastError: "502 Bad Gateway", CreatedAt: created}}

	status, body := e.do(t, "GET", "/api/admin/webhooks/failed")
	want := `[{"id":5,"subscription":"crm","webhook_id":"msg_5","event":"session.status","attempts":4,"last_error":"502 Bad Gateway",` +
		`"created_at":"2026-11-21T11:00:00.000Z"}]` + "\n"
	if status != http.StatusOK || string(body) != want {
		t.Fatalf("failed: %d %s\nwant %s", status, body, want)
	}
	for _, c := range []struct {
		id     string
		status int
		code   string
	}{{"999", 404, "not_found"}, {"abc", 404, "not_found"}, {"0", 404, "not_found"}, {"7", 409, "not_dead"}} {
		status, body := e.do(t, "POST", "/api/admin/webhooks/"+c.id+"/redeliver")
		if status != c.status || errorCode(t, string(body)) != c.code {
			t.Errorf("redeliver %s: %d %s, want %d %s", c.id, status, body, c.status, c.code)
		}
	}
	if status, body := e.do(t, "POST", "/api/admin/webhooks/5/redeliver"); status != http.StatusOK ||
		string(body) != `{"id":5,"status":"pending"}`+"\n" {
		t.Fatalf("redeliver: %d %s", status, body)
	}
	if status, _ := e.do(t, "POST", "/api/admin/webhooks/5/redeliver"); status != http.StatusNotFound {
		t.Errorf("second redeliver: %d", status)
	}
	if _, body := e.do(t, "GET", "/api/admin/webhooks/failed"); string(body) != "[]\n" {
		t.Errorf("dead letters after redelivery: %s", body)
	}
	var got []string
	for _, a := range e.auditEntries(t, audit.WeekOf(saturday)) {
		got = append(got, string(a.Action)+" "+string(a.Outcome))
	}
	wantAudit := []string{"webhooks.redeliver not_found", "webhooks.redeliver not_found", "webhooks.redeliver not_found",
		"webhooks.redeliver rejected", "webhooks.redeliver success", "webhooks.redeliver not_found"}
	if fmt.Sprint(got) != fmt.Sprint(wantAudit) {
		t.Errorf("audit\n got %q\nwant %q", got, wantAudit)
	}
	e.webhooks.err = errors.New("database is locked")
	if status, body := e.do(t, "GET", "/api/admin/webhooks/failed"); status != 500 || errorCode(t, string(body)) != "internal" {
		t.Errorf("failing outbox: %d %s", status, body)
	}
}

// Every admin endpoint answers 401, with one body, to a missing or wrong
// token; the refusals are audited once per address and window, not each.
func TestAdminNeedsToken(t *testing.T) {
	e := newEnv(t)
	paths := []struct{ method, path string }{
		{"GET", "/api/admin/state"}, {"DELETE", "/api/admin/logs?date=2026-11-21&level=info"},
		{"GET", "/api/admin/audit"}, {"DELETE", "/api/admin/audit/1?week=2026-W47"},
		{"GET", "/api/admin/webhooks/failed"}, {"POST", "/api/admin/webhooks/1/redeliver"},
		{"POST", "/api/admin/webhooks/replay?since=2026-11-21T10:00:00Z"},
		{"GET", "/api/admin/analytics/delivery"}, {"GET", "/session/qr"}, {"POST", "/session/pairing-code"},
		{"GET", "/session/groups"}, {"POST", "/session/logout"},
	}
	var first string
	for _, p := range paths {
		for _, headers := range [][]string{nil, {"X-Admin-Token: wrong"}, {"X-Api-Key: " + testAPIKey}} {
			status, body := call(t, p.method, e.srv.URL+p.path, nil, headers...)
			if first == "" {
				first = body
			}
			if status != http.StatusUnauthorized || body != first || errorCode(t, body) != "unauthorized" {
				t.Errorf("%s %s %v: %d %s", p.method, p.path, headers, status, body)
			}
		}
	}
	got := e.auditEntries(t, audit.WeekOf(saturday))
	if len(got) != 1 || got[0].Action != audit.ActionAdminToken || got[0].Detail != "wrong admin token" {
		t.Errorf("unauthenticated requests audited: %v, want one refusal record", got)
	}
}
