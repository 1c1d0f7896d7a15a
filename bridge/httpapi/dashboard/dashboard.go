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
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
)

//go:embed web/*.html web/static
var web embed.FS

// Session is what the dashboard reads and drives of the WhatsApp link;
// *whatsapp.Manager implements it.
type Session interface {
	Status() whatsapp.Status
	Subscribe() (<-chan struct{}, func())
	CurrentQR() whatsapp.LinkQR
	QR(ctx context.Context) (string, error)
	PairingCode(ctx context.Context, phone string) (string, error)
	Groups(ctx context.Context) ([]whatsapp.Group, error)
	Logout(ctx context.Context) error
	NewMessageID() string
	Send(ctx context.Context, out whatsapp.Outgoing) error
}

// Options configures the dashboard.
type Options struct {
	Session    Session
	AdminToken bridge.Secret
	// TOTPKey is the decoded TOTP_SECRET; empty: no TOTP.
	TOTPKey []byte
	Audit   httpapi.AuditRecorder
	Log     logr.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Dashboard is the /dashboard/ handler.
type Dashboard struct {
	opts     Options
	mux      *http.ServeMux
	sessions *sessions
	totp     *totpVerifier
	signIns  *failures // by client address
	codes    *failures // by action
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
	d := &Dashboard{
		opts:     opts,
		mux:      http.NewServeMux(),
		sessions: &sessions{now: opts.Now, m: map[string]*webSession{}},
		totp:     newTOTPVerifier(opts.TOTPKey),
		signIns:  newFailures(maxSignInFailures, signInWindow, opts.Now),
		codes:    newFailures(maxCodeFailures, codeLockout, opts.Now),
		done:     make(chan struct{}),
		wake:     make(chan struct{}),
	}
	d.routes()
	return d
}

func (d *Dashboard) routes() {
	m := d.mux
	m.HandleFunc("GET /dashboard/{$}", d.page)
	m.Handle("GET /dashboard/static/", http.StripPrefix("/dashboard/", http.FileServerFS(mustSub(web, "web"))))
	m.HandleFunc("POST /dashboard/signin", d.signIn)
	m.HandleFunc("POST /dashboard/signout", d.form(d.signOut))
	m.HandleFunc("GET /dashboard/events", d.signedIn(d.events))
	m.HandleFunc("GET /dashboard/qr.png", d.signedIn(d.qrImage))
	m.HandleFunc("POST /dashboard/qr", d.form(d.showQR))
	m.HandleFunc("POST /dashboard/pairing-code", d.form(d.pairingCode))
	m.HandleFunc("GET /dashboard/groups", d.signedIn(d.groups))
	m.HandleFunc("POST /dashboard/chat-code", d.form(d.sendChatCode))
	m.HandleFunc("POST /dashboard/logout", d.form(d.logout))
}

// ServeHTTP sets the headers every dashboard answer carries, then routes.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	d.mux.ServeHTTP(w, r)
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
