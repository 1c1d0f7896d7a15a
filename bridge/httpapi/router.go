// Package httpapi is the bridge's HTTP surface, one package per audience
// mounted by one thin router: the messaging API (httpapi/messaging, behind
// the API key), the admin API (httpapi/admin, behind the admin token), the
// dashboard (httpapi/dashboard, its own sign-in) and the public endpoints
// (httpapi/public: health, metrics, the API description, profiles). What
// they share (the JSON error shape mapped from bridge.Error in one table,
// decoding, the credential check, the audit middleware) is
// httpapi/internal/httpkit.
package httpapi

import (
	"net/http"
	"net/netip"
	"regexp"
	"time"

	"github.com/go-logr/logr"
	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/bridge/httpapi/admin"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
	"github.com/msgbridge/msgbridge/bridge/httpapi/public"
)

// Deps is what the router mounts: each audience's own ports, and what
// they share.
type Deps struct {
	Public    public.Deps
	Messaging messaging.Deps
	Admin     admin.Deps
	// Dashboard, when set, serves the operator's web page under /dashboard/;
	// it does its own sign-in and CSRF checks.
	Dashboard http.Handler
	// Credentials are the API key and the admin token; their Guard limits
	// failed credentials per address (the dashboard's sign-in shares it;
	// a new one when nil).
	Credentials Credentials
	// Audit records admin, session and group actions in the weekly audit
	// log.
	Audit AuditRecorder
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	Log logr.Logger
	// Limits bound request bodies; DefaultServerLimits of the messaging
	// API's MaxFileSize when zero.
	Limits guard.Limits
	// TrustedProxies are the CIDRs whose X-Forwarded-For names the client
	// (TRUSTED_PROXIES): every limit and audit record uses that address.
	TrustedProxies []netip.Prefix
	// CloudAPI, when set, builds the Cloud API door given the API's check
	// of an API key (constant time, within the per-address limit on failed
	// credentials, which sets Retry-After on w), the one check of every
	// door; the door calls the use cases itself, never this router. It
	// serves the paths that CloudAPIPaths matches (/v<major>.<minor>/...).
	CloudAPI      func(checkKey KeyCheck) http.Handler
	CloudAPIPaths *regexp.Regexp
}

// The shared pieces that the wiring names.
type (
	// Credentials are the API key and the admin token, and the limit on
	// failed ones.
	Credentials = httpkit.Credentials
	// KeyCheck checks a presented API key for request r, as every API
	// request's is checked; a locked address gets Retry-After on w.
	KeyCheck = httpkit.KeyCheck
	// AuditRecorder records the outcome of admin actions.
	AuditRecorder = httpkit.AuditRecorder
	// ErrorBody is the one JSON error shape.
	ErrorBody = httpkit.ErrorBody
)

// NewRouter returns the bridge's HTTP handler.
func NewRouter(d Deps) http.Handler {
	c := common(&d)
	r := httpkit.NewMux(d.Log)
	public.Mount(r, d.Public, c)
	if d.Dashboard != nil {
		r.PathPrefix("/dashboard/").Handler(d.Dashboard)
		r.Handle("/dashboard", http.RedirectHandler("/dashboard/", http.StatusMovedPermanently))
	}
	admin.Mount(r, d.Admin, c)
	messaging.Mount(r, d.Messaging, c)
	if d.CloudAPI != nil {
		cloud := d.CloudAPI(c.Credentials.CheckAPIKey)
		r.MatcherFunc(func(req *http.Request, _ *mux.RouteMatch) bool { return d.CloudAPIPaths.MatchString(req.URL.Path) }).
			Handler(cloud)
	}
	limitBodies := guard.Bodies(d.Limits, c.Credentials.TrustedHeader,
		func(w http.ResponseWriter, err error) { httpkit.WriteError(w, d.Log, err) }, r)
	return guard.Forwarded(d.TrustedProxies, limitBodies)
}

// common fills d's defaults and returns what every audience shares.
func common(d *Deps) httpkit.Common {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Credentials.Guard == nil {
		d.Credentials.Guard = guard.NewCredentials(d.Audit, d.Now)
	}
	if d.Limits == (guard.Limits{}) {
		d.Limits = DefaultServerLimits(d.Messaging.Send.MaxFileSize)
	}
	return httpkit.Common{Now: d.Now, Log: d.Log, Credentials: d.Credentials, Audit: d.Audit}
}

// DefaultServerLimits are guard's body limits for attachments of at most
// maxFile bytes: the largest body POST /send takes is its most files.
func DefaultServerLimits(maxFile int64) guard.Limits { return messaging.DefaultLimits(maxFile) }

// Starting answers while the bridge starts: GET /health at once, other
// requests held until the router is Ready.
type Starting = public.Starting

// NewStarting returns the handler of a process started at started.
func NewStarting(started time.Time) *Starting { return public.NewStarting(started) }
