package httpapi

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/go-logr/logr"
	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/logging"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

var (
	masterKey = bytes.Repeat([]byte{3}, sqlite.MasterKeyLen)
	saturday  = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) // 2026-W47
)

// env is a bridge's admin surface on real files: a DATA_DIR in a temporary
// directory, served by a real HTTP server through gorilla/mux routes as the
// API router declares them.
type env struct {
	srv     *httptest.Server
	clock   *clocktesting.FakeClock
	log     logr.Logger
	files   *logging.Files
	logsDir string
	audit   *audit.Log
	db      *sql.DB
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{clock: clocktesting.NewFakeClock(saturday), logsDir: filepath.Join(root, "logs")}
	var err error
	e.log, e.files, err = logging.New(logging.Options{Dir: e.logsDir, Level: logging.LevelInfo, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.files.Close() })
	if e.audit, err = audit.Open(filepath.Join(root, "audit"), masterKey, e.clock.Now); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.audit.Close() })
	if e.db, err = sqlite.OpenBridgeDB(context.Background(), filepath.Join(root, "bridge.db"), masterKey); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.db.Close() })

	rec := AuditRecorder{Log: e.audit, Logger: e.log}
	r := mux.NewRouter()
	r.Handle("/api/admin/logs", LogsHandler(e.files, rec)).Methods(http.MethodDelete)
	r.Handle("/api/admin/audit", AuditListHandler(e.audit, e.clock.Now, e.log)).Methods(http.MethodGet)
	r.Handle("/api/admin/audit/{id}", AuditDeleteHandler(rec)).Methods(http.MethodDelete)
	r.Handle("/api/admin/analytics/delivery", DeliveryAnalyticsHandler(e.db, e.clock.Now, e.log)).Methods(http.MethodGet)
	e.srv = httptest.NewServer(r)
	t.Cleanup(e.srv.Close)
	return e
}

// do sends a request and returns the status and the body.
func (e *env) do(t *testing.T, method, path string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Forwarded-For", "203.0.113.9") // must not be believed
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func errorCode(t *testing.T, body []byte) string {
	t.Helper()
	var b struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &b); err != nil || b.Error.Code == "" || b.Error.Message == "" {
		t.Fatalf("not the error shape: %s", body)
	}
	return b.Error.Code
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
		{"DELETE", "/api/admin/audit/1.5?week=2026-W47", "invalid_id"},
		{"DELETE", "/api/admin/audit/1..2?week=2026-W47", "invalid_id"},
		{"DELETE", "/api/admin/audit/0?week=2026-W47", "invalid_id"},
		{"DELETE", "/api/admin/audit/abc?week=2026-W47", "invalid_id"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			status, body := e.do(t, tt.method, tt.path)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", status, body)
			}
			if code := errorCode(t, body); code != tt.code {
				t.Errorf("code %q, want %q", code, tt.code)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(e.logsDir, "2026-11-21.info.log")); err != nil {
		t.Errorf("a refused purge touched the log: %v", err)
	}
}

// A slash or a bare ".." in the ID never reaches the handler through
// gorilla/mux (it cleans the path, redirecting, and {id} matches within one
// segment); should a router ever pass one (UseEncodedPath), the handler
// refuses it too.
func TestAuditDeleteRefusesPathLikeIDs(t *testing.T) {
	e := newEnv(t)
	h := AuditDeleteHandler(AuditRecorder{Log: e.audit, Logger: e.log})
	for _, id := range []string{"..", "1/2", "../1", "1%2F2", "."} {
		r := httptest.NewRequest(http.MethodDelete, "/api/admin/audit/x?week=2026-W47", nil)
		r = mux.SetURLVars(r, map[string]string{"id": id})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusBadRequest || errorCode(t, w.Body.Bytes()) != "invalid_id" {
			t.Errorf("handler, id %q: %d %s", id, w.Code, w.Body)
		}
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
	if status != http.StatusNotFound || errorCode(t, body) != "log_not_found" {
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
	want := fmt.Sprintf(`[{"id":%d,"time":"2026-11-21T12:00:00.000Z","action":"session.pairing_qr","outcome":"success","client":"10.0.0.1"}]`+"\n", first)
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
	path := fmt.Sprintf("/api/admin/audit/%d?week=2026-W47", first)
	if status, body := e.do(t, "DELETE", path); status != http.StatusOK ||
		string(body) != fmt.Sprintf(`{"id":%d,"week":"2026-W47","deleted":true}`+"\n", first) {
		t.Fatalf("delete: %d %s", status, body)
	}
	if status, body := e.do(t, "DELETE", path); status != http.StatusNotFound || errorCode(t, body) != "audit_record_not_found" {
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
		fmt.Sprintf("audit.delete success 127.0.0.1 week=2026-W47 id=%d", first),
		fmt.Sprintf("audit.delete not_found 127.0.0.1 week=2026-W47 id=%d", first),
	}
	if fmt.Sprint(got) != fmt.Sprint(wantAudit) {
		t.Errorf("W48 audit\n got %q\nwant %q", got, wantAudit)
	}
}

func TestDeliveryAnalytics(t *testing.T) {
	e := newEnv(t)
	for day, counts := range map[string][2]int{
		"2026-11-21": {12, 1}, // today
		"2026-11-19": {5, 0},
		"2026-11-14": {9, 9}, // 8 days ago: outside the default window
		"2026-11-22": {1, 1}, // tomorrow (a clock skew): never shown
	} {
		if _, err := e.db.Exec(`INSERT INTO delivery_daily (day, success, failed) VALUES (?, ?, ?)`, day, counts[0], counts[1]); err != nil {
			t.Fatal(err)
		}
	}
	get := func(query string) []DeliveryDay {
		t.Helper()
		status, body := e.do(t, "GET", "/api/admin/analytics/delivery"+query)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", query, status, body)
		}
		var out []DeliveryDay
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := []DeliveryDay{{"2026-11-19", 5, 0}, {"2026-11-20", 0, 0}, {"2026-11-21", 12, 1}}
	if got := get("?days=3"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("days=3\n got %v\nwant %v", got, want)
	}
	week := get("")
	if len(week) != 7 || week[0].Day != "2026-11-15" || week[6] != (DeliveryDay{"2026-11-21", 12, 1}) {
		t.Errorf("default: %v", week)
	}
	if got := get("?days=8"); got[0] != (DeliveryDay{"2026-11-14", 9, 9}) {
		t.Errorf("days=8 starts %v", got[0])
	}
	year := get("?days=366")
	if len(year) != 366 || year[0].Day != "2025-11-21" || year[365].Day != "2026-11-21" {
		t.Errorf("days=366: %d days, %s .. %s", len(year), year[0].Day, year[len(year)-1].Day)
	}
	// The day is UTC's: 23:30 UTC is already tomorrow in Berlin, not here.
	e.clock.SetTime(time.Date(2026, 11, 22, 0, 30, 0, 0, time.FixedZone("CET", 3600)))
	if got := get("?days=1"); fmt.Sprint(got) != fmt.Sprint([]DeliveryDay{{"2026-11-21", 12, 1}}) {
		t.Errorf("days=1 at 23:30 UTC: %v", got)
	}
}
