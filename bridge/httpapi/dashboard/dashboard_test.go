package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi"
	"github.com/msgbridge/msgbridge/bridge/httpapi/admin"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/public"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/fakes"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

const adminToken = "admin-token-0123456789"

// browser is a signed-in client of a dashboard served on loopback.
type browser struct {
	t      *testing.T
	base   string
	client *http.Client
	csrf   string
}

func newDashboard(t *testing.T, sess *fakes.Session) *browser {
	t.Helper()
	l, err := audit.Open(filepath.Join(t.TempDir(), "audit"), testutil.TestKey(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	d := New(Options{Session: sess, AdminToken: adminToken, Audit: httpkit.AuditRecorder{Trail: l, Logger: logr.Discard()}, Log: logr.Discard()})
	srv := httptest.NewServer(httpapi.NewRouter(httpapi.Deps{Public: public.Deps{Link: sess}, Admin: admin.Deps{Session: sess}, Dashboard: d, Log: logr.Discard()}))
	t.Cleanup(srv.Close)
	t.Cleanup(d.Close)
	return newDashboardClient(t, srv.URL)
}

// newDashboardClient is a browser of the dashboard at base, not signed in.
func newDashboardClient(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

func (b *browser) do(method, path string, form url.Values) (int, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) signIn(token string) int {
	b.t.Helper()
	status, _ := b.do(http.MethodPost, "/dashboard/signin", url.Values{"token": {token}})
	if _, page := b.do(http.MethodGet, "/dashboard/", nil); csrfField.MatchString(page) {
		b.csrf = csrfField.FindStringSubmatch(page)[1]
	}
	return status
}

// post sends a form of the signed-in page, with its CSRF token.
func (b *browser) post(path string, form url.Values) (int, string) {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", b.csrf)
	return b.do(http.MethodPost, path, form)
}

func code(t *testing.T, body string) string {
	t.Helper()
	var e httpkit.ErrorBody
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not the error shape: %s", body)
	}
	return e.Error.Code
}

// The dashboard answers in the API's error shape, on the API's router style.
func TestRoutesAndGuards(t *testing.T) {
	b := newDashboard(t, &fakes.Session{})
	if status, body := b.do(http.MethodGet, "/dashboard/nope", nil); status != 404 || code(t, body) != "not_found" {
		t.Errorf("unknown path: %d %s", status, body)
	}
	if status, body := b.do(http.MethodDelete, "/dashboard/qr", nil); status != 405 || code(t, body) != "method_not_allowed" {
		t.Errorf("wrong method: %d %s", status, body)
	}
	if status, body := b.do(http.MethodGet, "/dashboard/groups", nil); status != 401 || code(t, body) != "not_signed_in" {
		t.Errorf("not signed in: %d %s", status, body)
	}
	if status, _ := b.do(http.MethodGet, "/dashboard/static/app.js", nil); status != 200 {
		t.Errorf("static file: %d", status)
	}
	if status := b.signIn("wrong"); status != http.StatusSeeOther || b.csrf != "" {
		t.Fatalf("wrong token: %d, csrf %q", status, b.csrf)
	}
	if status := b.signIn(adminToken); status != http.StatusSeeOther || b.csrf == "" {
		t.Fatalf("sign-in: %d, csrf %q", status, b.csrf)
	}
	if status, body := b.do(http.MethodPost, "/dashboard/qr", url.Values{"csrf": {"forged"}}); status != 403 || code(t, body) != "csrf" {
		t.Errorf("forged CSRF token: %d %s", status, body)
	}
}

// The session's errors answer with the API's codes (the dashboard's own
// whatsapp_unavailable is gone).
func TestSessionErrorsAsTheAPI(t *testing.T) {
	sess := &fakes.Session{}
	b := newDashboard(t, sess)
	b.signIn(adminToken)
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{bridge.ErrNotLinked, 503, "not_linked"},
		{errors.New("websocket: close 1006"), 502, "whatsapp_error"},
		{context.DeadlineExceeded, 504, "timeout"},
	} {
		sess.Err = c.err
		if status, body := b.do(http.MethodGet, "/dashboard/groups", nil); status != c.status || code(t, body) != c.code {
			t.Errorf("groups with %v: %d %s, want %d %s", c.err, status, body, c.status, c.code)
		}
		if status, body := b.post("/dashboard/pairing-code", url.Values{"number": {"4915100000002"}}); status != c.status || code(t, body) != c.code {
			t.Errorf("pairing code with %v: %d %s, want %d %s", c.err, status, body, c.status, c.code)
		}
	}
	sess.Err = nil
	sess.Link.State = contract.StateConnected
	if status, body := b.post("/dashboard/qr", nil); status != 409 || code(t, body) != "already_linked" {
		t.Errorf("QR while linked: %d %s", status, body)
	}
	if status, body := b.post("/dashboard/pairing-code", url.Values{"number": {"12ab"}}); status != 400 || code(t, body) != "invalid_number" {
		t.Errorf("bad number: %d %s", status, body)
	}
}

// The one-time code goes to the account's own chat, addressed as a phone
// recipient; without a known account there is nobody to send it to.
func TestChatCode(t *testing.T) {
	sess := &fakes.Session{Link: bridge.SessionStatus{State: contract.StateConnected}}
	b := newDashboard(t, sess)
	b.signIn(adminToken)
	if status, body := b.post("/dashboard/chat-code", nil); status != 503 || code(t, body) != "not_linked" {
		t.Errorf("no account: %d %s", status, body)
	}
	sess.Link.Account = "4915100000002"
	if status, body := b.post("/dashboard/chat-code", nil); status != 200 {
		t.Fatalf("chat code: %d %s", status, body)
	}
	if status, body := b.post("/dashboard/chat-code", nil); status != 429 || code(t, body) != "too_soon" {
		t.Errorf("second chat code at once: %d %s", status, body)
	}
	out := sess.Sent()[0]
	if out.Recipient != bridge.PhoneRecipient("4915100000002") || out.Type != bridge.TypeText || out.ID != "3EB0TEST0001" ||
		!strings.Contains(out.Text, "msgbridge dashboard code: ") {
		t.Errorf("sent %+v", out)
	}
	code6 := regexp.MustCompile(`code: (\d{6})`).FindStringSubmatch(out.Text)[1]
	if status, body := b.post("/dashboard/logout", url.Values{"code": {"000000"}}); status != 403 || code(t, body) != "wrong_code" {
		t.Errorf("wrong code: %d %s", status, body)
	}
	if status, body := b.post("/dashboard/logout", url.Values{"code": {code6}}); status != 200 {
		t.Errorf("logout with the chat code: %d %s", status, body)
	}
}
