// Package dashboard serves the operator's web page at /dashboard/: sign-in
// with the admin token, the session's live state over server-sent events, the
// QR code as it rotates, a pairing-code form, the groups and logout, with
// one-time passwords in front of showing a QR code and logging out.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary: nothing
// is fetched from elsewhere, and the Content-Security-Policy says so.
package dashboard

import (
	"context"
	"embed"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/bridge/httpapi/admin"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/notify"
)

//go:embed web/*.html web/static
var web embed.FS

// Session is what the dashboard reads and drives of the WhatsApp link, a
// subset of bridge.Session: the API's, plus watching the link and sending
// one-time codes to the account's own chat. Those codes go to the session
// directly, not through the send queue, so that a secret never enters the
// message log.
type Session interface {
	admin.Session
	Subscribe() (changes <-chan struct{}, cancel func())
	CurrentQR() bridge.LinkQR
	NewMessageID() string
	Send(ctx context.Context, out bridge.Outgoing) error
}

// Options configures the dashboard.
type Options struct {
	Session    Session
	AdminToken bridge.Secret
	// TOTPKey is the decoded TOTP_SECRET; empty: no TOTP.
	TOTPKey []byte
	Audit   httpkit.AuditRecorder
	// Guard limits failed admin tokens per address, shared with the API so
	// that a guess anywhere counts everywhere; a new one when nil.
	Guard *guard.Credentials
	Log   logr.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// API is DataAPI, what the pages read and do; nil: those
	// paths are 404.
	API http.Handler
	// Traffic tells the event streams that messages changed; nil: never.
	Traffic Traffic
}

// Dashboard is the /dashboard/ handler.
type Dashboard struct {
	opts    Options
	traffic Traffic
	// router is made by the first request: most starts never see a
	// browser, and each start pays for its routes' patterns before its
	// first answer.
	router   func() *mux.Router
	sessions *sessions
	totp     *totpVerifier
	codes    *guard.Failures // by action
	// lastChatCode is when a code was last sent to the account's own
	// chat, for the whole bridge: a limit per browser session is none, a
	// client can sign in again.
	chatCodeMu   sync.Mutex
	lastChatCode time.Time
	// done ends the event streams at shutdown: http.Server.Shutdown waits
	// for handlers but never cancels them.
	done      chan struct{}
	closeOnce sync.Once
	// wake is closed and replaced when a browser session changes in a way
	// its streams must show at once (a QR permission, a sign-out).
	wakeMu sync.Mutex
	wake   chan struct{}
}

// New returns the dashboard.
func New(opts Options) *Dashboard {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Guard == nil {
		opts.Guard = guard.NewCredentials(opts.Audit, opts.Now)
	}
	var traffic Traffic = &notify.Changes{} // never notified
	if opts.Traffic != nil {
		traffic = opts.Traffic
	}
	d := &Dashboard{
		opts:     opts,
		traffic:  traffic,
		sessions: &sessions{now: opts.Now, m: map[string]*webSession{}},
		totp:     newTOTPVerifier(opts.TOTPKey),
		codes:    guard.NewFailures(maxCodeFailures, codeLockout, opts.Now),
		done:     make(chan struct{}),
		wake:     make(chan struct{}),
	}
	d.router = sync.OnceValue(d.routes)
	return d
}

func (d *Dashboard) routes() *mux.Router {
	r := httpkit.NewMux(d.opts.Log)
	get, post := []string{http.MethodGet, http.MethodHead}, http.MethodPost
	r.Handle("/dashboard/", d.handle(d.page)).Methods(get...)
	r.PathPrefix("/dashboard/static/").Handler(d.static()).Methods(get...)
	r.Handle("/dashboard/signin", d.handle(d.signIn)).Methods(post)
	r.Handle("/dashboard/signout", d.handle(d.form(d.signOut))).Methods(post)
	r.Handle("/dashboard/events", d.handle(d.signedIn(d.events))).Methods(get...)
	r.Handle("/dashboard/qr.png", d.handle(d.signedIn(d.qrImage))).Methods(get...)
	r.Handle("/dashboard/qr", d.handle(d.form(d.showQR))).Methods(post)
	r.Handle("/dashboard/pairing-code", d.handle(d.form(d.pairingCode))).Methods(post)
	r.Handle("/dashboard/groups", d.handle(d.signedIn(d.groups))).Methods(get...)
	r.Handle("/dashboard/chat-code", d.handle(d.form(d.sendChatCode))).Methods(post)
	r.Handle("/dashboard/logout", d.handle(d.form(d.logout))).Methods(post)
	r.PathPrefix(DataAPIPrefix + "/").Handler(d.api())
	return r
}

// handle answers h's errors as the API does.
func (d *Dashboard) handle(h httpkit.HandlerFunc) http.Handler { return httpkit.Handle(d.opts.Log, h) }

// ServeHTTP sets the headers every dashboard answer carries, then routes.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	d.router().ServeHTTP(w, r)
}

// Close ends the open event streams; call it when the server shuts down.
func (d *Dashboard) Close() { d.closeOnce.Do(func() { close(d.done) }) }

// streamsWake is the channel the next wakeStreams closes.
func (d *Dashboard) streamsWake() <-chan struct{} {
	d.wakeMu.Lock()
	defer d.wakeMu.Unlock()
	return d.wake
}

// wakeStreams makes every event stream re-read its session and send.
func (d *Dashboard) wakeStreams() {
	d.wakeMu.Lock()
	defer d.wakeMu.Unlock()
	close(d.wake)
	d.wake = make(chan struct{})
}

// static serves the page's files, never a directory listing: a path naming
// a directory (FileServer redirects one without its slash there) is 404.
func (d *Dashboard) static() http.Handler {
	files := http.StripPrefix("/dashboard/", http.FileServerFS(mustSub(web, "web")))
	notFound := d.handle(func(http.ResponseWriter, *http.Request) error { return errNoFile })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			notFound.ServeHTTP(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}

var errNoFile = bridge.Errorf(bridge.KindNotFound, bridge.CodeNotFound, "no such file")
