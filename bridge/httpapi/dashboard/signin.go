package dashboard

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi"
)

// signInErrors are the sign-in page's messages by the key its ?error=
// carries; a key, not the text, so that a crafted link cannot put words on
// the real page.
var signInErrors = map[string]string{
	"token": "Wrong admin token.",
}

// signIn checks the admin token and starts a session. It answers with
// redirects, so that the form works without script.
func (d *Dashboard) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	// No session exists yet to bind a token to; the origin check stops a
	// foreign page from signing the browser in (login CSRF).
	if crossOrigin.Check(r) != nil {
		httpapi.Error(w, http.StatusForbidden, "cross_origin", "cross-origin sign-in refused")
		return
	}
	client := httpapi.ClientAddress(r)
	ok, left, _ := d.signIns.attempt(client)
	if !ok {
		d.opts.Audit.Record(r, audit.ActionDashboardSignIn, audit.OutcomeRejected, "rate limited")
		w.Header().Set("Retry-After", fmt.Sprint(int(left.Seconds())+1))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		_ = pages.ExecuteTemplate(w, "signin.html", map[string]any{"Error": "Too many failed sign-ins; wait a minute."})
		return
	}
	if !tokenMatches(r.PostFormValue("token"), d.opts.AdminToken.Reveal()) {
		d.opts.Audit.Record(r, audit.ActionDashboardSignIn, audit.OutcomeRejected, "wrong admin token")
		http.Redirect(w, r, "/dashboard/?error=token", http.StatusSeeOther)
		return
	}
	d.signIns.reset(client)
	ws := d.sessions.create()
	setCookie(w, r, ws)
	d.opts.Audit.Record(r, audit.ActionDashboardSignIn, audit.OutcomeSuccess, "")
	http.Redirect(w, r, "/dashboard/", http.StatusSeeOther)
}

// signOut ends the session.
func (d *Dashboard) signOut(w http.ResponseWriter, r *http.Request, ws webSession) {
	d.sessions.delete(ws.id)
	clearCookie(w, r)
	d.wakeStreams() // its streams end
	httpapi.Write(w, http.StatusOK, message{"Signed out."})
}

// tokenMatches compares in constant time; hashing first hides the lengths.
// An empty expected token admits nobody.
func tokenMatches(presented, want string) bool {
	if want == "" {
		return false
	}
	p, q := sha256.Sum256([]byte(presented)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(p[:], q[:]) == 1
}
