package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"time"
)

// cookieName is the dashboard's session cookie.
const cookieName = "msgbridge_dashboard"

// sessionTTL is how long a sign-in lasts; the operator signs in again after.
const sessionTTL = 8 * time.Hour

// webSession is one signed-in browser. Only its random ID leaves the server.
type webSession struct {
	id      string
	csrf    string // synchronizer token for this session's forms
	expires time.Time
	// qrAttempt is the link attempt whose QR codes this browser may see (a
	// valid code was given for it, or no TOTP is configured); 0: none. It
	// is an attempt, not a flag, so that the permission ends with the
	// attempt however that ends.
	qrAttempt uint64
	// chatCode is a one-time code sent to the account's own chat, with its
	// expiry; empty when none is pending.
	chatCode        string
	chatCodeExpires time.Time
}

// sessions is the server-side session store. It lives in memory: a restart
// signs everybody out, which is what a restart of an admin surface should do.
type sessions struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*webSession
}

// randomToken is 32 bytes from crypto/rand, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather than return short)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *sessions) create() *webSession {
	ws := &webSession{id: randomToken(), csrf: randomToken(), expires: s.now().Add(sessionTTL)}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Expired sessions are dropped here, so the map stays as small as the
	// number of live sign-ins without a sweeper goroutine.
	for id, old := range s.m {
		if !s.now().Before(old.expires) {
			delete(s.m, id)
		}
	}
	s.m[ws.id] = ws
	return ws
}

// get returns a copy of the live session of r's cookie, if any.
func (s *sessions) get(r *http.Request) (webSession, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return webSession{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ws, ok := s.m[c.Value]
	if !ok || !s.now().Before(ws.expires) {
		return webSession{}, false
	}
	return *ws, true
}

// update runs fn on the stored session id under the lock.
func (s *sessions) update(id string, fn func(*webSession)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ws, ok := s.m[id]; ok {
		fn(ws)
	}
}

func (s *sessions) delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// takeChatCode consumes the pending chat code of session id when code
// matches it (constant time) and it has not expired.
func (s *sessions) takeChatCode(id, code string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws, ok := s.m[id]
	if !ok || ws.chatCode == "" || !s.now().Before(ws.chatCodeExpires) {
		return false
	}
	if subtle.ConstantTimeCompare([]byte(ws.chatCode), []byte(code)) != 1 {
		return false
	}
	ws.chatCode = ""
	return true
}

// setCookie gives the browser the session's ID: HttpOnly (no script reads
// it), SameSite=Strict (no cross-site request carries it), Secure behind TLS.
func setCookie(w http.ResponseWriter, r *http.Request, ws *webSession) {
	http.SetCookie(w, sessionCookie(r, ws.id, ws.expires, 0))
}

// clearCookie tells the browser to drop the session cookie.
func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, sessionCookie(r, "", time.Time{}, -1))
}

func sessionCookie(r *http.Request, value string, expires time.Time, maxAge int) *http.Cookie {
	return &http.Cookie{ //nolint:gosec // Secure follows the request on purpose: port-forwarded plain HTTP must still sign in
		Name: cookieName, Value: value, Path: "/dashboard/", Expires: expires, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r),
	}
}

// overTLS reports whether the browser reached us over TLS: directly, or
// through a proxy that terminates it (an Ingress) and says so. Believing a
// forged X-Forwarded-Proto harms only the forger: its browser then keeps
// the cookie from plain HTTP requests.
func overTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}
