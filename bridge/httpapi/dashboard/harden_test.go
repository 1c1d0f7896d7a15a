package dashboard

import (
	"net/http"
	"net/http/cookiejar"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/fakes"
)

// The embedded files are served, their directories are not listed.
func TestStaticHasNoDirectoryListing(t *testing.T) {
	b := newDashboard(t, &fakes.Session{})
	for path, want := range map[string]int{
		"/dashboard/static/":        http.StatusNotFound,
		"/dashboard/static/app.js":  http.StatusOK,
		"/dashboard/static/nothing": http.StatusNotFound,
	} {
		resp, err := b.client.Get(b.base + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// One code per chatCodeEvery for the whole bridge: signing in again (a
// new browser session) does not buy another.
func TestChatCodeThrottledPerBridge(t *testing.T) {
	sess := &fakes.Session{Link: bridge.SessionStatus{State: contract.StateConnected, Account: "4915100000002"}}
	first := newDashboard(t, sess)
	first.signIn(adminToken)
	if status, body := first.post("/dashboard/chat-code", nil); status != 200 {
		t.Fatalf("chat code: %d %s", status, body)
	}
	second := first.again()
	second.signIn(adminToken)
	if status, body := second.post("/dashboard/chat-code", nil); status != 429 || code(t, body) != "too_soon" {
		t.Errorf("another session's chat code at once: %d %s", status, body)
	}
	if len(sess.Sent()) != 1 {
		t.Errorf("%d codes sent, want 1", len(sess.Sent()))
	}
}

// again is a new browser (its own cookies) of the same dashboard.
func (b *browser) again() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: b.t, base: b.base, client: &http.Client{Jar: jar, CheckRedirect: b.client.CheckRedirect}}
}
