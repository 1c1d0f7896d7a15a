// Package httpapi is the bridge's whole HTTP surface: routing, credentials,
// request validation, and the one JSON error shape every answer uses,
// mapped from bridge.Error in one table (errors.go). Handlers are methods of
// one server returning an error; the dashboard, a sub-package, reuses the
// credential check, the error mapping and the router style.
package httpapi

import (
	"net/http"
	"net/netip"
	"regexp"

	"time"

	"github.com/gorilla/mux"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/bridge/httpapi/openapi"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// Deps is what the API's handlers use: ports, not stores.
type Deps struct {
	// Started is when the process started; /health reports the uptime.
	Started time.Time
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Session is the WhatsApp link.
	Session Session
	// AdminToken guards /session/* (but status) and /api/admin/*.
	AdminToken bridge.Secret
	// Messages is the send queue and message log.
	Messages Messages
	// Pacing shows the send queue in /health and the admin state; nil
	// leaves it out.
	Pacing Pacing
	// Send configures POST /send; its APIKey also guards the message log.
	Send SendConfig
	// Keys are API_KEY and the scoped keys (*apikeys.Keys), which every
	// door checks, managed under /api/admin/keys; nil: API_KEY alone,
	// with every scope, and no such routes.
	Keys Keys
	// Approvals are the sends held for approval, decided under
	// /api/admin/approvals; nil leaves those routes out.
	Approvals Approvals
	// Uploads keeps the files of POST /api/uploads for POST /api/messages;
	// nil: both answer 503 uploads_unavailable for attachments.
	Uploads Uploads
	// Targets finds the messages that reactions, edits and revokes name.
	Targets ActionTargets
	// Polls reads a sent poll and its votes for its tally; nil: a poll
	// is shown without one.
	Polls Polls
	// Chats marks chats read and shows presence in them.
	Chats Chats
	// Contacts answers whether numbers are on WhatsApp.
	Contacts Contacts
	// Groups administers groups; GroupAnswers keeps their answers under an
	// Idempotency-Key; GroupActionRate paces them (GROUP_ACTION_RATE; zero:
	// unpaced, tests only).
	Groups          GroupAdmin
	GroupAnswers    GroupAnswers
	GroupActionRate bridge.SendRate
	// Analytics counts deliveries per day.
	Analytics DeliveryAnalytics
	// Audit records admin and session actions in the weekly audit log.
	Audit AuditRecorder
	// LogFiles are the daily log files the purge endpoint deletes.
	LogFiles LogFiles
	// Media serves incoming attachments.
	Media MediaFiles
	// Webhooks holds the webhook events whose delivery gave up.
	Webhooks DeadLetters
	// Subscriptions are the receivers of the events, managed under
	// /api/admin/subscriptions; nil leaves those routes out.
	Subscriptions Subscriptions
	// Events is the event log GET /api/events streams; nil leaves the
	// route out. EventsHeartbeat is how often an idle stream sends a
	// comment (15 s when zero); EventsWriteTimeout how long a write to a
	// client that reads nothing may wait before its stream is cut (10 s
	// when zero).
	Events             EventLog
	EventsHeartbeat    time.Duration
	EventsWriteTimeout time.Duration
	// EventStreams and EventStreamsPerAddress cap the open streams in all
	// and from one client address (EVENT_STREAMS,
	// EVENT_STREAMS_PER_ADDRESS; 64 and 8 when zero).
	EventStreams           int
	EventStreamsPerAddress int
	// Inbox is the incoming history: GET /api/messages?direction=in lists
	// it, POST /api/admin/webhooks/replay replays it, a reaction finds the
	// received message it names in it.
	Inbox IncomingHistory
	// Metrics serves GET /metrics.
	Metrics http.Handler
	// Dashboard, when set, serves the operator's web page under /dashboard/;
	// it does its own sign-in and CSRF checks.
	Dashboard http.Handler
	// Guard limits failed credentials per address; the dashboard's sign-in
	// shares it. A new one when nil.
	Guard *guard.Credentials
	// Limits bound request bodies; DefaultServerLimits(Send.MaxFileSize)
	// when zero.
	Limits guard.Limits
	// TrustedProxies are the CIDRs whose X-Forwarded-For names the client
	// (TRUSTED_PROXIES): every limit and audit record uses that address.
	TrustedProxies []netip.Prefix
	Log            logr.Logger
	// Pprof serves Go's profiles under /debug/pprof/ behind the admin
	// token (PPROF=on); off: those paths are 404.
	Pprof bool
	// CloudAPI, when set, builds the Cloud API door over the bridge's own
	// API and its check of an API key (constant time, within the
	// per-address limit on failed credentials, which sets Retry-After on
	// w); it serves the paths that CloudAPIPaths matches (/v<major>.<minor>/...).
	CloudAPI      func(own http.Handler, checkKey KeyCheck) http.Handler
	CloudAPIPaths *regexp.Regexp
}

// server is the API: its handlers are its methods.
type server struct {
	Deps
	space     *spool.Space
	groupPace *groupPace
	groupKeys keyLocks
	// eventHub reads the event log once for every open stream; streams
	// caps them.
	eventHub *eventHub
	streams  *streamSlots
}

// NewRouter returns the bridge's HTTP handler.
func NewRouter(d Deps) http.Handler {
	s := newServer(d)
	r := NewMux(d.Log)
	s.publicRoutes(r)
	s.sessionRoutes(r)
	s.adminRoutes(r, "/api/admin", s.admin, s.audited)
	s.messagingRoutes(r)
	s.pprofRoutes(r)
	if d.CloudAPI != nil {
		// The Cloud API door translates Graph requests into this router's.
		cloud := d.CloudAPI(r, s.checkAPIKey)
		r.MatcherFunc(func(req *http.Request, _ *mux.RouteMatch) bool { return d.CloudAPIPaths.MatchString(req.URL.Path) }).
			Handler(cloud)
	}
	return guard.Forwarded(d.TrustedProxies, s.limitBodies(r))
}

// newServer fills d's defaults.
func newServer(d Deps) *server {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Guard == nil {
		d.Guard = guard.NewCredentials(d.Audit, d.Now)
	}
	if d.Limits == (guard.Limits{}) {
		d.Limits = DefaultServerLimits(d.Send.MaxFileSize)
	}
	s := &server{Deps: d, space: spool.NewSpace(d.Send.SpoolDir, d.Send.SpoolMaxBytes), groupPace: newGroupPace(d.GroupActionRate, d.Now),
		streams: newStreamSlots(d.EventStreams, d.EventStreamsPerAddress)}
	if d.Events != nil {
		s.eventHub = newEventHub(d.Events, d.Log)
	}
	return s
}

const (
	get, post, del, patch = http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodPatch
)

// publicRoutes need no credential, or bring their own (the dashboard).
func (s *server) publicRoutes(r *mux.Router) {
	r.Handle("/health", s.handle(s.health)).Methods(get, http.MethodHead)
	if s.Metrics != nil {
		r.Handle("/metrics", s.Metrics).Methods(get)
	}
	r.Handle("/openapi.json", openapi.Handler()).Methods(get, http.MethodHead)
	r.PathPrefix("/docs/").Handler(openapi.DocsHandler())
	r.Handle("/docs", http.RedirectHandler("/docs/", http.StatusMovedPermanently))
	if s.Dashboard != nil {
		r.PathPrefix("/dashboard/").Handler(s.Dashboard)
		r.Handle("/dashboard", http.RedirectHandler("/dashboard/", http.StatusMovedPermanently))
	}
}

func (s *server) sessionRoutes(r *mux.Router) {
	r.Handle("/session/status", s.handle(s.sessionStatus)).Methods(get)
	r.Handle("/session/qr", s.audited(audit.ActionPairingQR, s.sessionQR)).Methods(get)
	r.Handle("/session/pairing-code", s.audited(audit.ActionPairingCode, s.sessionPairingCode)).Methods(post)
	r.Handle("/session/groups", s.admin(s.sessionGroups)).Methods(get)
	r.Handle("/session/logout", s.audited(audit.ActionLogout, s.sessionLogout)).Methods(post)
}

// adminRoutes are the admin operations under prefix: the API's behind the
// admin token, the dashboard's behind its signed-in session.
func (s *server) adminRoutes(r *mux.Router, prefix string, admin func(HandlerFunc) http.Handler,
	audited func(audit.Action, HandlerFunc) http.Handler) {
	r.Handle(prefix+"/state", admin(s.adminState)).Methods(get)
	r.Handle(prefix+"/logs", admin(s.purgeLog)).Methods(del)
	r.Handle(prefix+"/audit", admin(s.listAudit)).Methods(get)
	r.Handle(prefix+"/audit/{id}", admin(s.deleteAudit)).Methods(del)
	r.Handle(prefix+"/webhooks/failed", admin(s.listDeadLetters)).Methods(get)
	r.Handle(prefix+"/webhooks/{id}/redeliver", audited(audit.ActionWebhookRedeliver, s.redeliver)).Methods(post)
	r.Handle(prefix+"/webhooks/replay", audited(audit.ActionWebhookReplay, s.replay)).Methods(post)
	r.Handle(prefix+"/analytics/delivery", admin(s.deliveryAnalytics)).Methods(get)
	if s.Subscriptions != nil {
		s.subscriptionRoutes(r, prefix, admin, audited)
	}
	if s.Keys != nil {
		s.keyRoutes(r, prefix, admin, audited)
	}
	if s.Approvals != nil {
		s.approvalRoutes(r, prefix, admin, audited)
	}
}

func (s *server) subscriptionRoutes(r *mux.Router, prefix string, admin func(HandlerFunc) http.Handler,
	audited func(audit.Action, HandlerFunc) http.Handler) {
	r.Handle(prefix+"/subscriptions", admin(s.listSubscriptions)).Methods(get)
	r.Handle(prefix+"/subscriptions", audited(audit.ActionSubscriptionCreate, s.createSubscription)).Methods(post)
	r.Handle(prefix+"/subscriptions/{id}", admin(s.getSubscription)).Methods(get)
	r.Handle(prefix+"/subscriptions/{id}", audited(audit.ActionSubscriptionPut, s.putSubscription)).Methods(http.MethodPut)
	r.Handle(prefix+"/subscriptions/{id}", audited(audit.ActionSubscriptionDelete, s.deleteSubscription)).Methods(del)
}

// messagingRoutes take the API key (POST /send checks it itself: it also
// reads it from the form).
func (s *server) messagingRoutes(r *mux.Router) {
	r.Handle("/send", s.handle(s.send)).Methods(post)
	read, send := bridge.ScopeRead, bridge.ScopeSend
	for _, route := range []struct {
		path, method string
		scope        bridge.Scope
		h            HandlerFunc
	}{
		{"/api/messages", get, read, s.listMessages},
		{"/api/messages", post, send, s.postMessage},
		{"/api/uploads", post, send, s.postUpload},
		{"/api/uploads/{id}", del, send, s.deleteUpload},
		{"/api/messages/{id}", get, read, s.getMessage},
		{"/api/messages/{id}", patch, send, s.editMessage},
		{"/api/messages/{id}", del, send, s.revokeMessage},
		{"/api/messages/{id}/reaction", post, send, s.react},
		{"/api/media/{id}", get, read, s.getMedia},
		{"/api/chats/{jid}/read", post, send, s.markRead},
		{"/api/chats/{jid}/presence", post, send, s.setPresence},
		{"/api/contacts/{number}", get, read, s.contact},
		{"/api/groups", post, send, s.createGroup},
		{"/api/groups/join", post, send, s.joinGroup},
		{"/api/groups/{jid}", get, read, s.getGroup},
		{"/api/groups/{jid}", patch, send, s.updateGroup},
		{"/api/groups/{jid}/photo", http.MethodPut, send, s.setGroupPhoto},
		{"/api/groups/{jid}/photo", del, send, s.deleteGroupPhoto},
		{"/api/groups/{jid}/participants", post, send, s.changeMembers},
		{"/api/groups/{jid}/invite-link", get, read, s.getInviteLink},
		{"/api/groups/{jid}/invite-link", del, send, s.revokeInviteLink},
		{"/api/groups/{jid}/leave", post, send, s.leaveGroup},
	} {
		r.Handle(route.path, s.handle(s.requireAPIKey(route.scope, route.h))).Methods(route.method)
	}
	if s.Events != nil {
		r.Handle("/api/events", s.handle(s.requireAPIKey(read, s.streamEvents))).Methods(get)
	}
}

func (s *server) handle(h HandlerFunc) http.Handler { return Handle(s.Log, h) }

// admin guards h with the admin token.
func (s *server) admin(h HandlerFunc) http.Handler { return s.requireAdmin(s.handle(h)) }

// audited guards h with the admin token, then records its outcome as
// action: the token is checked first so that unauthenticated requests never
// reach the audit log.
func (s *server) audited(action audit.Action, h HandlerFunc) http.Handler {
	return s.requireAdmin(s.Audit.Middleware(action, s.handle(h)))
}
