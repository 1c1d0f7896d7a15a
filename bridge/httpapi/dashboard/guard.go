package dashboard

import (
	"crypto/subtle"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge/httpapi"
)

// maxFormBytes bounds a dashboard form: a token, a code, a number.
const maxFormBytes = 4096

// crossOrigin refuses state-changing requests that a browser marks as coming
// from another site (Sec-Fetch-Site, else Origin against Host). Requests
// with neither header (curl) pass; the CSRF token still guards them.
var crossOrigin = http.NewCrossOriginProtection()

// csrfValid checks the form's synchronizer token against the session's, in
// constant time.
func csrfValid(r *http.Request, ws webSession) bool {
	got := r.PostFormValue("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(ws.csrf)) == 1
}

// signedIn wraps a read-only handler: it needs a live session.
func (d *Dashboard) signedIn(next func(http.ResponseWriter, *http.Request, webSession)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ws, ok := d.sessions.get(r)
		if !ok {
			httpapi.Error(w, http.StatusUnauthorized, "not_signed_in", "Sign in first.")
			return
		}
		next(w, r, ws)
	}
}

// form wraps a state-changing handler: a live session, the same origin and
// the session's CSRF token.
func (d *Dashboard) form(next func(http.ResponseWriter, *http.Request, webSession)) http.HandlerFunc {
	return d.signedIn(func(w http.ResponseWriter, r *http.Request, ws webSession) {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if crossOrigin.Check(r) != nil || !csrfValid(r, ws) {
			httpapi.Error(w, http.StatusForbidden, "csrf", "The form is not from this dashboard; reload the page.")
			return
		}
		next(w, r, ws)
	})
}
