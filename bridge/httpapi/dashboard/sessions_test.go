package dashboard

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestSessionCookieAttributes(t *testing.T) {
	for _, c := range []struct {
		name   string
		tls    bool
		proto  string
		secure bool
	}{
		{"plain HTTP", false, "", false},
		{"direct TLS", true, "", true},
		{"TLS ended at a proxy", false, "https", true},
		{"a proxy on plain HTTP", false, "http", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/dashboard/signin", nil)
			if c.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if c.proto != "" {
				r.Header.Set("X-Forwarded-Proto", c.proto)
			}
			w := httptest.NewRecorder()
			setCookie(w, r, &webSession{id: "id", expires: time.Now().Add(time.Hour)})
			got := w.Result().Cookies()[0]
			if got.Secure != c.secure || !got.HttpOnly || got.SameSite != http.SameSiteStrictMode || got.Path != "/dashboard/" {
				t.Errorf("cookie %+v", got)
			}
		})
	}
}

// Sessions expire after sessionTTL; expired ones are dropped when the next
// is created; a chat code is taken once and not after it expires.
func TestSessionsExpireAndChatCodesAreOneTime(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := &sessions{now: func() time.Time { return now }, m: map[string]*webSession{}}
	withCookie := func(id string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/dashboard/", nil)
		r.AddCookie(&http.Cookie{Name: cookieName, Value: id})
		return r
	}
	a := s.create()
	if _, ok := s.get(withCookie(a.id)); !ok {
		t.Fatal("a new session is not found")
	}
	if _, ok := s.get(withCookie("forged")); ok {
		t.Fatal("an unknown ID is a session")
	}
	s.update(a.id, func(ws *webSession) { ws.chatCode, ws.chatCodeExpires = "123456", now.Add(chatCodeTTL) })
	if s.takeChatCode(a.id, "654321") {
		t.Error("a wrong chat code was taken")
	}
	if !s.takeChatCode(a.id, "123456") || s.takeChatCode(a.id, "123456") {
		t.Error("the chat code is not exactly one-time")
	}
	s.update(a.id, func(ws *webSession) { ws.chatCode, ws.chatCodeExpires = "111111", now.Add(chatCodeTTL) })
	now = now.Add(chatCodeTTL)
	if s.takeChatCode(a.id, "111111") {
		t.Error("an expired chat code was taken")
	}
	now = now.Add(sessionTTL)
	if _, ok := s.get(withCookie(a.id)); ok {
		t.Error("an expired session is still valid")
	}
	s.create()
	if len(s.m) != 1 {
		t.Errorf("%d sessions stored; the expired one should be gone", len(s.m))
	}
}
