// Package cloudapi is the Cloud API door: a second door beside the bridge's
// own API that answers as Meta's WhatsApp Cloud API (Graph) does, so that
// Chatwoot, Typebot and every Cloud API SDK work against the bridge by
// changing only their base URL.
//
// The door keeps no send path of its own: it reads each Graph request into
// the terms of the bridge's use cases (a send's draft, an upload, a
// reaction's target, a read mark) and calls them as the bridge's own API
// does, never through that API's HTTP handler, so both doors share one
// credential check, validation, queue, pacing, idempotency keys, log and
// outbox, and a message sent through one is visible through the other
// under the same id. The door renders the use cases' outcomes and errors
// in Graph's shapes; a key first used through the bridge's own API replays
// here as Graph's answer.
package cloudapi

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// Received finds a received message's chat and sender in the incoming
// history (*inbox.Inbox): a Cloud read mark names only the message.
type Received = sendqueue.ReceivedFinder

// MediaFiles opens incoming attachments (*media.Downloader).
type MediaFiles interface {
	Open(ctx context.Context, id string) (*bridge.MediaFile, error)
}

// Uploads keeps files uploaded for sending (*spool.Uploads).
type Uploads interface {
	Add(ctx context.Context, f *spool.File) (spool.Upload, error)
	// Use is a file of a send's own for upload id.
	Use(ctx context.Context, id string) (*spool.File, error)
	Open(ctx context.Context, id string) (spool.Upload, io.ReadSeekCloser, error)
	Delete(ctx context.Context, id string) error
}

// Chats marks chats read (*whatsapp.Session).
type Chats interface {
	MarkRead(ctx context.Context, chat, sender bridge.Recipient, id string) error
}

// Config is what the door needs.
type Config struct {
	// CheckKey checks the credential a request presents; required. It is
	// the one check every door makes (constant time, counted per address;
	// Retry-After set on w when the address is locked).
	CheckKey func(w http.ResponseWriter, r *http.Request, presented string) (bridge.Caller, error)
	// Sending is the send use case; Targets finds what a reaction names in
	// the log (*sendqueue.Queue).
	Sending sendqueue.Sending
	Targets sendqueue.MessageFinder
	// Chats marks chats read.
	Chats Chats
	// Space bounds the spool (SPOOL_MAX_BYTES) that uploads and linked
	// media are written into, each file at most MaxFileSize bytes; the
	// bridge's own API writes into the same Space.
	Space       *spool.Space
	MaxFileSize int64
	// Account is the linked account's number, digits; "" while none is
	// linked (then any phone_number_id is accepted, so that sends queue as
	// the bridge's own API queues them).
	Account func() string
	// History finds what a read mark or a reaction names.
	History Received
	// Media serves incoming attachments; Uploads keeps the uploaded ones;
	// nil: uploads are refused (uploads_unavailable).
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

// New returns the door; cfg.CheckKey is required.
func New(cfg Config) *Door {
	if cfg.CheckKey == nil {
		panic("cloudapi.New: Config.CheckKey is required")
	}
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
// bridge's per-address limit on failed credentials (CheckKey, the check of
// every door, in constant time).
func (d *Door) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, err := d.cfg.CheckKey(w, r, token(r)) // a locked address gets its Retry-After on w
		if err == nil {
			// The use cases see the caller as the bridge's own API's do:
			// its scope here, its chats, budget and approval there.
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

// deadline bounds fetches of linked media.
const defaultLinkDeadline = 60 * time.Second

// scopeOf is the scope a Graph request needs: reading for GET, sending
// (or changing) for the rest.
func scopeOf(method string) bridge.Scope {
	if method == http.MethodGet || method == http.MethodHead {
		return bridge.ScopeRead
	}
	return bridge.ScopeSend
}
