package process

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// dashClient is a browser-like HTTP client of the dashboard: it keeps the
// session cookie and the page's CSRF token.
type dashClient struct {
	t    *testing.T
	base string
	http *http.Client
	csrf string
}

func newDashClient(t *testing.T, base string) *dashClient {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &dashClient{t: t, base: base, http: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// answer is a response whose body was read and closed.
type answer struct {
	StatusCode int
	Header     http.Header
	Cookies    []*http.Cookie
}

// do sends the request with the same-origin headers a browser adds, then
// extra ones, and returns the answer and its body.
func (c *dashClient) do(method, path string, form url.Values, extra http.Header) (answer, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		c.t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", c.base)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return answer{StatusCode: resp.StatusCode, Header: resp.Header, Cookies: resp.Cookies()}, string(body)
}

// post sends a form with the page's CSRF token.
func (c *dashClient) post(path string, form url.Values) (int, string) {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", c.csrf)
	resp, body := c.do(http.MethodPost, path, form, nil)
	return resp.StatusCode, body
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs in and reads the page's CSRF token; it returns the page.
func (c *dashClient) signIn() string {
	c.t.Helper()
	resp, _ := c.do(http.MethodPost, "/dashboard/signin", url.Values{"token": {testAdminToken}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/" {
		c.t.Fatalf("sign-in: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, page := c.do(http.MethodGet, "/dashboard/", nil, nil)
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		c.t.Fatalf("the signed-in page has no CSRF token: %s", page)
	}
	c.csrf = m[1]
	return page
}

// events opens the event stream and returns its state events.
func (c *dashClient) events(ctx context.Context) <-chan map[string]any {
	c.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/dashboard/events", nil)
	if err != nil {
		c.t.Fatal(err)
	}
	resp, err := c.http.Do(req) //nolint:bodyclose // the reading goroutine below closes it
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		c.t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan map[string]any, 64)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		lines := bufio.NewScanner(resp.Body)
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				var ev map[string]any
				if json.Unmarshal([]byte(data), &ev) == nil {
					out <- ev
				}
			}
		}
	}()
	return out
}

// waitEvent reads events until ok holds for one.
func waitEvent(t *testing.T, evs <-chan map[string]any, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	return testutil.Receive(t, 40*time.Second, evs, ok, "no event with %s", what)
}

var sixDigits = regexp.MustCompile(`\b[0-9]{6}\b`)

// Without TOTP_SECRET, over plain HTTP: the cookie's attributes; cross-site
// and token-less forms refused; the QR needs only the sign-in while nothing
// is linked; the event stream follows the link; logout with a code sent to
// the account's own chat; five wrong codes lock logout; five wrong sign-ins
// lock the sign-in; all of it audited.
func TestDashboardWithoutTOTP(t *testing.T) {
	sim := wasim.Start(t)
	phone := sim.Phone(testAccount)
	p := startBridge(t, simBridgeBin, simEnv(sim, t.TempDir()))
	base := "http://" + p.addr
	c := newDashClient(t, base)

	resp, page := c.do(http.MethodGet, "/dashboard/", nil, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `id="signin"`) {
		t.Fatalf("before sign-in: %d %s", resp.StatusCode, page)
	}
	if _, page := c.do(http.MethodGet, "/dashboard/?error=Your+session+expired,+call+555", nil, nil); strings.Contains(page, "555") {
		t.Error("a link can put its own words on the sign-in page")
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if resp, _ := c.do(http.MethodGet, "/dashboard/events", nil, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("events before sign-in: %d", resp.StatusCode)
	}

	// A foreign page cannot sign the browser in.
	foreign := http.Header{"Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}
	if resp, _ := c.do(http.MethodPost, "/dashboard/signin", url.Values{"token": {testAdminToken}}, foreign); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site sign-in: %d, want 403", resp.StatusCode)
	}

	resp, _ = c.do(http.MethodPost, "/dashboard/signin", url.Values{"token": {testAdminToken}}, nil)
	var cookie *http.Cookie
	for _, ck := range resp.Cookies {
		if ck.Name == "msgbridge_dashboard" {
			cookie = ck
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/dashboard/" || cookie.Secure {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/dashboard/, not Secure over plain HTTP", cookie)
	}
	if page = c.signIn(); !strings.Contains(page, `id="no-totp"`) {
		t.Error("without TOTP_SECRET the page does not say so")
	}

	// Forms need the CSRF token and the same origin.
	if resp, _ := c.do(http.MethodPost, "/dashboard/qr", url.Values{}, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("QR without the CSRF token: %d, want 403", resp.StatusCode)
	}
	if resp, _ := c.do(http.MethodPost, "/dashboard/qr", url.Values{"csrf": {c.csrf}}, foreign); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site QR form: %d, want 403", resp.StatusCode)
	}

	// The QR needs only the sign-in; the stream and the image follow it.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	evs := c.events(ctx)
	if code, body := c.post("/dashboard/qr", nil); code != http.StatusOK {
		t.Fatalf("show QR: %d %s", code, body)
	}
	ev := waitEvent(t, evs, "a QR image", func(ev map[string]any) bool { return ev["qr"] != "" && ev["state"] == "pairing" })
	resp, img := c.do(http.MethodGet, ev["qr"].(string), nil, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("QR image: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	qr := decodeQRPNG(t, []byte(img))
	if want := bridgeQR(t, base); qr != want {
		t.Fatalf("the image decodes to %q, the bridge's QR is %q", qr, want)
	}
	wasimtest.Scan(t, phone, qr)
	waitEvent(t, evs, "connected", func(ev map[string]any) bool {
		return ev["connected"] == true && ev["account"] == testAccount && ev["qr"] == ""
	})
	if code, _ := c.post("/dashboard/qr", nil); code != http.StatusConflict {
		t.Errorf("QR while linked: %d, want 409", code)
	}

	// Logout with the code the bridge sends to the account's own chat; a
	// second code only after a pause, so nobody can flood that chat.
	if code, body := c.post("/dashboard/chat-code", nil); code != http.StatusOK {
		t.Fatalf("chat code: %d %s", code, body)
	}
	if code, _ := c.post("/dashboard/chat-code", nil); code != http.StatusTooManyRequests {
		t.Errorf("a second chat code at once: %d, want 429", code)
	}
	mctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var chatCode string
	for chatCode == "" {
		m, err := phone.Next(mctx)
		if err != nil {
			t.Fatalf("the phone got no code: %v", err)
		}
		if strings.Contains(m.Text(), "msgbridge dashboard code") {
			chatCode = sixDigits.FindString(m.Text())
		}
	}
	if code, body := c.post("/dashboard/logout", url.Values{"code": {chatCode}}); code != http.StatusOK {
		t.Fatalf("logout with the chat code: %d %s", code, body)
	}
	waitEvent(t, evs, "unpaired", func(ev map[string]any) bool { return ev["state"] == "unpaired" })
	if code, _ := c.post("/dashboard/logout", url.Values{"code": {chatCode}}); code != http.StatusForbidden {
		t.Errorf("the chat code worked twice: %d", code)
	}

	// Seeing a QR code was granted for one link attempt, not for later ones
	// (here one started through the admin API).
	bridgeQR(t, base)
	if resp, _ := c.do(http.MethodGet, "/dashboard/qr.png", nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("QR image of a later link attempt: %d, want 404", resp.StatusCode)
	}
	waitEvent(t, evs, "pairing without a QR", func(ev map[string]any) bool { return ev["state"] == "pairing" && ev["qr"] == "" })

	// Five wrong codes (the used one above was the first) lock logout.
	for range 4 {
		if code, _ := c.post("/dashboard/logout", url.Values{"code": {"000000"}}); code != http.StatusForbidden {
			t.Fatalf("wrong code: %d, want 403", code)
		}
	}
	resp, _ = c.do(http.MethodPost, "/dashboard/logout", url.Values{"csrf": {c.csrf}, "code": {"000000"}}, nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("after five wrong codes: %d Retry-After %q, want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	// Signing out ends the session and its stream.
	if code, _ := c.post("/dashboard/signout", nil); code != http.StatusOK {
		t.Errorf("sign-out: %d", code)
	}
	for range evs { // the stream closes
	}
	if resp, _ := c.do(http.MethodGet, "/dashboard/events", nil, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("events after sign-out: %d", resp.StatusCode)
	}

	// Five wrong admin tokens lock the sign-in for wrong tokens; the right
	// one still passes, so a stranger sharing the operator's address
	// cannot lock the operator out.
	for range 5 {
		if resp, _ := c.do(http.MethodPost, "/dashboard/signin", url.Values{"token": {"wrong-token-0123456789"}}, nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("wrong sign-in: %d", resp.StatusCode)
		}
	}
	if resp, _ := c.do(http.MethodPost, "/dashboard/signin", url.Values{"token": {"wrong-token-0123456789"}}, nil); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a sixth wrong sign-in: %d, want 429", resp.StatusCode)
	}
	if resp, _ := c.do(http.MethodPost, "/dashboard/signin", url.Values{"token": {testAdminToken}}, nil); resp.StatusCode != http.StatusSeeOther ||
		strings.Contains(resp.Header.Get("Location"), "error") {
		t.Errorf("the right token from the locked address: %d %s, want a signed-in redirect", resp.StatusCode, resp.Header.Get("Location"))
	}

	var entries []struct{ Action, Outcome, Detail string }
	request(t, http.MethodGet, base+"/api/admin/audit", testAdminToken, "", "", &entries)
	var all []string
	for _, e := range entries {
		all = append(all, e.Action+"/"+e.Outcome+"/"+e.Detail)
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{
		"dashboard.sign_in/success/", "dashboard.sign_in/rejected/wrong admin token", "dashboard.sign_in/rejected/rate limited",
		"session.pairing_qr/success/dashboard", "session.logout/success/dashboard",
		"session.logout/rejected/locked for 5m0s after 5 wrong one-time codes",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("audit log lacks %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, chatCode) {
		t.Error("the one-time code is in the audit log")
	}
}
