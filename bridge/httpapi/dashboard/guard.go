package dashboard

import (
	"crypto/subtle"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// maxFormBytes bounds a dashboard form: a token, a code, a number.
const maxFormBytes = 4096

// crossOrigin refuses state-changing requests that a browser marks as coming
// from another site (Sec-Fetch-Site, else Origin against Host). Requests
// with neither header (curl) pass; the CSRF token still guards them.
var crossOrigin = http.NewCrossOriginProtection()

var (
	errNotSignedIn = bridge.Errorf(bridge.KindUnauthorized, bridge.CodeNotSignedIn, "Sign in first.")
	errCSRF        = bridge.Errorf(bridge.KindForbidden, bridge.CodeCSRF, "The form is not from this dashboard; reload the page.")
)

// csrfValid checks the form's synchronizer token against the session's, in
// constant time.
func csrfValid(r *http.Request, ws webSession) bool {
	got := r.PostFormValue("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(ws.csrf)) == 1
}

// sessionHandler is a handler of a signed-in browser: the API's handler
// style with the browser's session.
type sessionHandler func(http.ResponseWriter, *http.Request, webSession) error

// signedIn wraps a read-only handler: it needs a live session.
func (d *Dashboard) signedIn(next sessionHandler) httpkit.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ws, ok := d.sessions.get(r)
		if !ok {
			return errNotSignedIn
		}
		return next(w, r, ws)
	}
}

// form wraps a state-changing handler: a live session, the same origin and
// the session's CSRF token.
func (d *Dashboard) form(next sessionHandler) httpkit.HandlerFunc {
	return d.signedIn(func(w http.ResponseWriter, r *http.Request, ws webSession) error {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if crossOrigin.Check(r) != nil || !csrfValid(r, ws) {
			return errCSRF
		}
		return next(w, r, ws)
	})
}
