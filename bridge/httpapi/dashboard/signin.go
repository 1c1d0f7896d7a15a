package dashboard

import (
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// signInErrors are the sign-in page's messages by the key its ?error=
// carries; a key, not the text, so that a crafted link cannot put words on
// the real page.
var signInErrors = map[string]string{
	"token": "Wrong admin token.",
}

var errCrossOriginSignIn = bridge.Errorf(bridge.KindForbidden, bridge.CodeCrossOrigin, "cross-origin sign-in refused")

// signIn checks the admin token and starts a session. It answers with
// redirects and pages, so that the form works without script.
func (d *Dashboard) signIn(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	// No session exists yet to bind a token to; the origin check stops a
	// foreign page from signing the browser in (login CSRF).
	if crossOrigin.Check(r) != nil {
		return errCrossOriginSignIn
	}
	err := d.opts.Guard.Check(w, r, audit.ActionDashboardSignIn, "admin token", r.PostFormValue("token"), d.opts.AdminToken)
	switch {
	case bridge.ErrorKind(err) == bridge.KindRateLimited: // Retry-After is set
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		_ = pages().ExecuteTemplate(w, "signin.html", map[string]any{"Error": "Too many failed sign-ins; wait a minute."})
		return nil
	case err != nil:
		// A wrong token is answered with the sign-in page again, not an
		// error: the browser follows the redirect.
		http.Redirect(w, r, "/dashboard/?error=token", http.StatusSeeOther)
		return nil //nolint:nilerr // answered above
	}
	ws := d.sessions.create()
	setCookie(w, r, ws)
	d.opts.Audit.Record(r, audit.ActionDashboardSignIn, audit.OutcomeSuccess, "")
	http.Redirect(w, r, "/dashboard/", http.StatusSeeOther)
	return nil
}

// signOut ends the session.
func (d *Dashboard) signOut(w http.ResponseWriter, r *http.Request, ws webSession) error {
	d.sessions.delete(ws.id)
	clearCookie(w, r)
	d.wakeStreams() // its streams end
	return httpkit.WriteJSON(w, http.StatusOK, message{"Signed out."})
}
