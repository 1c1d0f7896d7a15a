package dashboard

import (
	"crypto/subtle"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
)

// csrfHeader carries the session's CSRF token on the pages' JSON requests
// (the API's handlers read their parameters from the query string, which
// must hold nothing secret, and no form).
const csrfHeader = "X-CSRF-Token"

// Traffic tells the dashboard that messages changed, after the change is
// committed (*notify.Changes, notified by the wiring).
type Traffic interface {
	Subscribe() (changes <-chan struct{}, cancel func())
}

var errNoAPI = bridge.Errorf(bridge.KindNotFound, bridge.CodeNotFound, "this dashboard has no data pages")

// api serves DataAPI to a signed-in browser: reads with its
// session, changes with the same origin and the session's CSRF token too.
func (d *Dashboard) api() http.Handler {
	read := d.handle(d.signedIn(func(w http.ResponseWriter, r *http.Request, _ webSession) error {
		return d.serveAPI(w, r)
	}))
	change := d.handle(d.signedIn(func(w http.ResponseWriter, r *http.Request, ws webSession) error {
		got := r.Header.Get(csrfHeader)
		if crossOrigin.Check(r) != nil || got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(ws.csrf)) != 1 {
			return errCSRF
		}
		return d.serveAPI(w, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			read.ServeHTTP(w, r)
			return
		}
		change.ServeHTTP(w, r)
	})
}

// serveAPI hands the request to the API's handlers, which answer it
// themselves (their errors included).
func (d *Dashboard) serveAPI(w http.ResponseWriter, r *http.Request) error {
	if d.opts.API == nil {
		return errNoAPI
	}
	d.opts.API.ServeHTTP(w, r)
	return nil
}
