// Package cloudapi is the Cloud API door: a second door beside the bridge's
// own API that answers as Meta's WhatsApp Cloud API (Graph) does, so that
// Chatwoot, Typebot and every Cloud API SDK work against the bridge by
// changing only their base URL.
//
// The door keeps no send path of its own: it translates each Graph request
// into a request of the bridge's own API (POST /api/messages, /api/uploads,
// the reaction and read endpoints) and serves it through that API's
// handler, so both doors share one validation, queue, pacing, idempotency
// keys, log and outbox, and a message sent through one is visible through
// the other under the same id. Answers and errors are translated back into
// Graph's shapes.
package cloudapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/spool"
	"github.com/msgbridge/msgbridge/contract"
)

// Received finds a received message's chat and sender in the incoming
// history (*inbox.Inbox): a Cloud read mark names only the message.
type Received interface {
	Received(ctx context.Context, id string) (chat, sender bridge.Recipient, found bool, err error)
}

// MediaFiles opens incoming attachments (*media.Downloader).
type MediaFiles interface {
	Open(ctx context.Context, id string) (*bridge.MediaFile, error)
}

// Uploads opens files uploaded for sending (*spool.Uploads).
type Uploads interface {
	Open(ctx context.Context, id string) (spool.Upload, io.ReadSeekCloser, error)
}

// Config is what the door needs.
type Config struct {
	// API is the bridge's own API, which every request is translated into.
	API http.Handler
	// CheckKey checks the credential a request presents, as the API does
	// (constant time, counted per address; Retry-After set on w when the
	// address is locked). nil: the door checks it through a request of
	// the API (GET /api/messages?limit=1), which costs a read of the log.
	CheckKey func(w http.ResponseWriter, r *http.Request, presented string) (bridge.Caller, error)
	// Account is the linked account's number, digits; "" while none is
	// linked (then any phone_number_id is accepted, so that sends queue as
	// the bridge's own API queues them).
	Account func() string
	// History finds what a read mark names.
	History Received
	// Media serves incoming attachments; Uploads the uploaded ones.
	Media   MediaFiles
	Uploads Uploads
	// Templates keeps the message templates; nil: the template endpoints
	// answer with no templates and a template send is refused.
	Templates *Templates
	// UserIDs issues and resolves the contacts' user ids (webhooks'
	// user_id, sends' recipient); the keyless default when nil.
	UserIDs *UserIDs
	// Links fetches media by link (CLOUD_MEDIA_HOSTS).
	Links LinkFetcher
	Log   logr.Logger
}

// Door is the Cloud API door's handler.
type Door struct {
	cfg Config
	// mux is made by the first Graph request: a bridge that never gets
	// one never compiles its routes' patterns, and a start pays for
	// nothing of it before its first answer.
	mux func() *mux.Router
	// links holds a slot per media link being fetched (maxLinkFetches).
	links chan struct{}
}

// versionPattern is Graph's version segment: v<major>.<minor>, or
// v<major> alone (Graph takes both).
const versionPattern = `v[0-9]{1,3}(?:\.[0-9]{1,3})?`

// unversionedPattern is the paths Graph also serves without a version (its
// latest then): a number's or an account's edges, debug_token, and an
// object by its id (digits, an incoming media's med_ id, an upload's UUID)
// with its file. Only these: every other unversioned path is the bridge's
// own.
const unversionedPattern = `debug_token|[0-9]+/(?:messages|media|message_templates|phone_numbers|subscribed_apps)|` +
	`(?:[0-9]+|med_[A-Za-z0-9_-]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:/file)?`

// PathPrefix matches the paths the door serves, for the router that mounts
// it at the root: every path under a version, and the unversioned ones.
var PathPrefix = regexp.MustCompile(`^/(?:` + versionPattern + `/|(?:` + unversionedPattern + `)$)`)

// New returns the door over cfg.API.
func New(cfg Config) *Door {
	if cfg.Account == nil {
		cfg.Account = func() string { return "" }
	}
	d := &Door{cfg: cfg, links: make(chan struct{}, maxLinkFetches)}
	d.mux = sync.OnceValue(d.routes)
	return d
}

// doorRoute is one of Graph's calls the door answers.
type doorRoute struct {
	path, method string
	h            handlerFunc
}

func (d *Door) doorRoutes() []doorRoute {
	return []doorRoute{
		{"/{phone}/messages", http.MethodPost, d.postMessage},
		{"/{phone}/media", http.MethodPost, d.postMedia},
		{"/{waba}/message_templates", http.MethodGet, d.listTemplates},
		{"/{waba}/message_templates", http.MethodPost, d.createTemplate},
		{"/{waba}/message_templates", http.MethodDelete, d.deleteTemplate},
		{"/{waba}/phone_numbers", http.MethodGet, d.phoneNumbers},
		{"/{waba}/subscribed_apps", http.MethodGet, d.subscribedApps},
		{"/{waba}/subscribed_apps", http.MethodPost, d.subscribeApp},
		{"/{waba}/subscribed_apps", http.MethodDelete, d.subscribeApp},
		{"/debug_token", http.MethodGet, d.debugToken},
		{"/{id}/file", http.MethodGet, d.mediaBytes},
		{"/{id}", http.MethodGet, d.getObject},
		{"/{id}", http.MethodDelete, d.deleteMedia},
	}
}

func (d *Door) routes() *mux.Router {
	r := mux.NewRouter()
	for _, route := range d.doorRoutes() {
		for _, prefix := range []string{"/{version:" + versionPattern + "}", ""} {
			r.Handle(prefix+route.path, d.handle(route.h)).Methods(route.method)
		}
	}
	unknown := d.handle(func(_ http.ResponseWriter, r *http.Request) error { return unknownPath(r) })
	r.NotFoundHandler, r.MethodNotAllowedHandler = unknown, unknown
	return r
}

// ServeHTTP serves a Graph request.
func (d *Door) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.mux().ServeHTTP(w, r) }

type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle checks r's credential, then serves h, and answers an error in
// Graph's shape. The credential comes first, as Graph checks it (190
// before anything about the path or the body): a caller without one learns
// nothing of the linked number, and every wrong one is counted by the
// bridge's per-address limit on failed credentials, through the bridge's
// own API (constant time), which the door's requests then pass again.
func (d *Door) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, err := d.authorize(r)
		if err == nil {
			// What the door serves itself (media, templates) sees the
			// caller as the bridge's own API does: its scope here, its
			// chats in the use cases.
			r = r.WithContext(bridge.WithCaller(r.Context(), caller))
			err = caller.Require(scopeOf(r.Method))
		}
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			writeGraphError(w, r, d.cfg.Log, err)
		}
	})
}

// token is the bearer token a Graph client presents: the Authorization
// header, or the access_token query parameter (Chatwoot's template sync).
func token(r *http.Request) string {
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return r.URL.Query().Get("access_token")
}

// answer is what the bridge's own API answered to one translated request.
type answer struct {
	status int
	header http.Header
	body   bytes.Buffer
}

func (a *answer) Header() http.Header { return a.header }
func (a *answer) Write(p []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	return a.body.Write(p)
}
func (a *answer) WriteHeader(status int) {
	if a.status == 0 {
		a.status = status
	}
}

// ok reports a 2xx answer.
func (a *answer) ok() bool { return a.status >= 200 && a.status < 300 }

// call serves one request of the bridge's own API on behalf of r: with r's
// credential, address and Idempotency-Key, in r's context.
func (d *Door) call(r *http.Request, method, path string, body io.Reader, contentType string) (*answer, error) {
	// Served in this process by the bridge's own handler: no network
	// request is made, and path is one the door built.
	in, err := http.NewRequestWithContext(r.Context(), method, path, body) //nolint:gosec // G704: never sent over a network

	if err != nil {
		return nil, bridge.Internal(bridge.CodeInternal, "the request could not be translated", err)
	}
	in.RemoteAddr = r.RemoteAddr
	in.Header.Set(contract.APIKeyHeader, token(r))
	if contentType != "" {
		in.Header.Set("Content-Type", contentType)
	}
	if k := r.Header.Get("Idempotency-Key"); k != "" {
		in.Header.Set("Idempotency-Key", k)
	}
	a := &answer{header: http.Header{}}
	d.cfg.API.ServeHTTP(a, in)
	if a.status == 0 {
		a.status = http.StatusOK
	}
	if !a.ok() {
		return a, apiError(a)
	}
	return a, nil
}

// authorize checks r's credential before anything else the door does and
// returns who presented it.
func (d *Door) authorize(r *http.Request) (bridge.Caller, error) {
	if d.cfg.CheckKey == nil {
		_, err := d.call(r, http.MethodGet, "/api/messages?limit=1", nil, "")
		return bridge.Owner(), err
	}
	rec := &answer{header: http.Header{}}
	c, err := d.cfg.CheckKey(rec, r, token(r))
	if err == nil {
		return c, nil
	}
	g := *fromBridge(err) // a copy: the shared errors stay as they are
	g.retryAfter = rec.header.Get("Retry-After")
	return bridge.Caller{}, &g
}

// scopeOf is the scope a Graph request needs: reading for GET, sending
// (or changing) for the rest.
func scopeOf(method string) bridge.Scope {
	if method == http.MethodGet || method == http.MethodHead {
		return bridge.ScopeRead
	}
	return bridge.ScopeSend
}

// pathEscape escapes one path segment of an API request.
func pathEscape(s string) string { return url.PathEscape(s) }

// deadline bounds fetches of linked media.
const defaultLinkDeadline = 60 * time.Second
