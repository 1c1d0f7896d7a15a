package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/fakes"
)

func TestSessionEndpoints(t *testing.T) {
	sess := &fakes.Session{Link: bridge.SessionStatus{State: contract.StateConnected}, QRCode: "2@abc", Code: "ABCD1234",
		GroupList: []bridge.Group{{ID: "1@g.us", Subject: "Ops", Participants: 3}}}
	srv := newTestServer(t, testDeps{Session: sess})
	for _, c := range []struct {
		method, path, body string
		want               string
	}{
		{"GET", "/session/status", "", `{"connected":true}`},
		{"GET", "/session/qr", "", `{"qr":"2@abc"}`},
		{"POST", "/session/pairing-code", `{"number":"+49 151 0000 0002"}`, `{"code":"ABCD1234"}`},
		{"GET", "/session/groups", "", `[{"id":"1@g.us","subject":"Ops","participants":3}]`},
		{"POST", "/session/logout", "", `{"message":"logged out; the credentials were deleted","status":"success"}`},
	} {
		status, body := call(t, c.method, srv.URL+c.path, strings.NewReader(c.body), adminHeader, "Content-Type: application/json")
		if status != 200 || body != c.want+"\n" {
			t.Errorf("%s %s: %d %s, want %s", c.method, c.path, status, body, c.want)
		}
	}
	if fmt.Sprint(sess.Paired()) != "[4915100000002]" {
		t.Errorf("pairing code asked for %v", sess.Paired())
	}
	sess.GroupList = nil
	if _, body := call(t, "GET", srv.URL+"/session/groups", nil, adminHeader); body != "[]\n" {
		t.Errorf("no groups: %s", body)
	}
}

// The session's errors, whatever endpoint meets them, answer with the
// API's codes.
func TestSessionErrors(t *testing.T) {
	sess := &fakes.Session{}
	srv := newTestServer(t, testDeps{Session: sess})
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{bridge.ErrLinked, 409, "already_linked"},
		{bridge.ErrNotLinked, 503, "not_linked"},
		{fmt.Errorf("pair: %w", context.DeadlineExceeded), 504, "timeout"},
		{errors.New("websocket: close 1006"), 502, "whatsapp_error"},
	} {
		sess.Err = c.err
		for _, ep := range []struct{ method, path, body string }{
			{"GET", "/session/qr", ""}, {"POST", "/session/pairing-code", `{"number":"4915100000002"}`},
			{"GET", "/session/groups", ""}, {"POST", "/session/logout", ""},
		} {
			status, body := call(t, ep.method, srv.URL+ep.path, strings.NewReader(ep.body), adminHeader, "Content-Type: application/json")
			if status != c.status || errorCode(t, body) != c.code {
				t.Errorf("%s %s with %v: %d %s, want %d %s", ep.method, ep.path, c.err, status, body, c.status, c.code)
			}
		}
	}
}

func TestPairingCodeValidation(t *testing.T) {
	sess := &fakes.Session{Code: "ABCD1234"}
	srv := newTestServer(t, testDeps{Session: sess})
	for _, c := range []struct {
		contentType, body string
		status            int
		code              string
	}{
		{"application/json", `{"number":"12ab"}`, 400, "invalid_number"},
		{"application/json", `{"number":"120363025246125486@g.us"}`, 400, "invalid_number"},
		{"application/json", `{"number":"4915100000002","x":1}`, 400, "invalid_json"},
		{"application/json", `{"number":"4915100000002"}{}`, 400, "invalid_json"},
		{"application/json", `{"number":"4915100000002\u0000"}`, 400, "invalid_text"},
		{"application/json", `{"number":"` + strings.Repeat("1", httpkit.MaxJSONBody) + `"}`, 413, "body_too_large"},
		{"text/plain", `{"number":"4915100000002"}`, 415, "unsupported_media_type"},
	} {
		status, body := call(t, "POST", srv.URL+"/session/pairing-code", strings.NewReader(c.body), adminHeader, "Content-Type: "+c.contentType)
		if status != c.status || errorCode(t, body) != c.code {
			t.Errorf("%s %.40s: %d %s, want %d %s", c.contentType, c.body, status, body, c.status, c.code)
		}
	}
	if len(sess.Paired()) != 0 {
		t.Errorf("invalid requests reached the session: %v", sess.Paired())
	}
}

// Session actions are audited with the outcome of their answer.
func TestSessionActionsAudited(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	log := openAuditLog(t, func() time.Time { return now })
	sess := &fakes.Session{QRCode: "2@abc", Err: bridge.ErrLinked}
	srv := newTestServer(t, testDeps{Session: sess, Now: func() time.Time { return now }, Audit: AuditRecorder{Trail: log}})
	call(t, "GET", srv.URL+"/session/qr", nil, adminHeader)
	sess.Err = nil
	call(t, "POST", srv.URL+"/session/logout", nil, adminHeader)
	call(t, "POST", srv.URL+"/session/logout", nil) // no token: a refusal, not a logout
	entries, err := log.List(context.Background(), audit.WeekOf(now))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, string(e.Action)+" "+string(e.Outcome))
	}
	if want := []string{"session.pairing_qr rejected", "session.logout success", "api.admin_token rejected"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("audit %q, want %q", got, want)
	}
}

func TestAdminState(t *testing.T) {
	beat := time.Date(2026, 11, 21, 11, 0, 0, 0, time.FixedZone("CET", 3600))
	srv := newTestServer(t, testDeps{Session: &fakes.Session{Link: bridge.SessionStatus{State: contract.StateDisconnected,
		Reason: "keepalive_timeout", Account: "4915100000002", PushName: "Ops", LastHeartbeat: beat}}})
	status, body := call(t, "GET", srv.URL+contract.AdminStatePath, nil, adminHeader)
	want := `{"state":"disconnected","connected":false,"account":"4915100000002","push_name":"Ops",` +
		`"last_heartbeat":"2026-11-21T10:00:00Z","connected_since":null,"reason":"keepalive_timeout","version":"` +
		contract.BuildVersion() + `","restricted_until":null}` + "\n"
	if status != 200 || body != want {
		t.Errorf("%d %s\nwant %s", status, body, want)
	}
}

// The dashboard route is mounted when given, and only then.
func TestDashboardMount(t *testing.T) {
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("dashboard " + r.URL.Path)) })
	srv := newTestServer(t, testDeps{Dashboard: dash})
	if status, body := call(t, "GET", srv.URL+"/dashboard/events", nil); status != 200 || body != "dashboard /dashboard/events" {
		t.Errorf("mounted: %d %s", status, body)
	}
	bare := newTestServer(t, testDeps{})
	if status, _ := call(t, "GET", bare.URL+"/dashboard/", nil); status != 404 {
		t.Errorf("without a dashboard: %d", status)
	}
}
