// Package messaging is the HTTP API for the account's own programs, behind
// the API key: sending (POST /send, /api/messages), uploads, the message
// log, reactions, edits and revokes, read marks and presence, contacts,
// group administration, incoming media and the event stream
// (GET /api/events).
package messaging

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/groupadmin"
	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// Deps is what the messaging handlers use: ports, not stores.
type Deps struct {
	// Messages is the send queue and message log.
	Messages Messages
	// Send configures POST /send and the uploads.
	Send SendConfig
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
	// Groups administers groups.
	Groups Groups
	// Channels reads and follows channels (paced like groups); nil leaves
	// /api/channels out.
	Channels Channels
	// Labels are the account's labels (changes paced like groups); nil
	// leaves /api/labels out.
	Labels Labels
	// Events configures GET /api/events.
	Events Events
	// Inbox is the incoming history: GET /api/messages?direction=in lists
	// it, a reaction finds the received message it names in it.
	Inbox IncomingHistory
	// Media serves incoming attachments.
	Media MediaFiles
}

// Groups is group administration: Admin does it (the session), Actions
// paces it and keeps its answers under an Idempotency-Key (unpaced,
// keeping none, when nil: tests only).
type Groups struct {
	Admin   GroupAdmin
	Actions *groupadmin.Actions
}

// Events is the event stream: Log is the event log GET /api/events
// streams (nil leaves the route out); Heartbeat is how often an idle stream
// sends a comment (15 s when zero); WriteTimeout how long a write to a
// client that reads nothing may wait before its stream is cut (10 s when
// zero); Streams and StreamsPerAddress cap the open streams in all and
// from one client address (EVENT_STREAMS, EVENT_STREAMS_PER_ADDRESS; 64
// and 8 when zero).
type Events struct {
	Log               EventLog
	Heartbeat         time.Duration
	WriteTimeout      time.Duration
	Streams           int
	StreamsPerAddress int
}

// server is the messaging API: its handlers are its methods.
type server struct {
	Deps
	httpkit.Common
	space *spool.Space
	// eventHub reads the event log once for every open stream; streams
	// caps them.
	eventHub *eventHub
	streams  *streamSlots
}

func newServer(d Deps, c httpkit.Common) *server {
	c.Now = c.Clock()
	if d.Groups.Actions == nil {
		d.Groups.Actions = groupadmin.New(nil, bridge.SendRate{}, c.Now, c.Log)
	}
	s := &server{Deps: d, Common: c, space: d.Send.space(),
		streams: newStreamSlots(d.Events.Streams, d.Events.StreamsPerAddress)}
	if d.Events.Log != nil {
		s.eventHub = newEventHub(d.Events.Log, c.Log)
	}
	return s
}

// MaxBody is the largest body POST /send takes: MaxItems files of at most
// maxFile bytes, and the fields.
func MaxBody(maxFile int64) int64 { return MaxItems*(maxFile+64<<10) + MaxFieldBytes }

// DefaultLimits are guard's body limits for attachments of at most
// maxFile bytes.
func DefaultLimits(maxFile int64) guard.Limits { return guard.DefaultLimits(MaxBody(maxFile)) }

// Mount adds the messaging API to r, behind the API key (POST /send
// checks it itself: it also reads it from the form).
func Mount(r *mux.Router, d Deps, c httpkit.Common) {
	s := newServer(d, c)
	r.Handle("/send", s.Handler(s.send)).Methods(httpkit.Post)
	httpkit.Mount(r, []httpkit.Route{
		{Path: "/api/messages", Method: httpkit.Get, H: s.listMessages},
		{Path: "/api/messages", Method: httpkit.Post, H: s.postMessage},
		{Path: "/api/uploads", Method: httpkit.Post, H: s.postUpload},
		{Path: "/api/uploads/{id}", Method: httpkit.Del, H: s.deleteUpload},
		{Path: "/api/messages/{id}", Method: httpkit.Get, H: s.getMessage},
		{Path: "/api/messages/{id}", Method: httpkit.Patch, H: s.editMessage},
		{Path: "/api/messages/{id}", Method: httpkit.Del, H: s.revokeMessage},
		{Path: "/api/messages/{id}/reaction", Method: httpkit.Post, H: s.react},
		{Path: "/api/media/{id}", Method: httpkit.Get, H: s.getMedia},
		{Path: "/api/chats/{jid}/read", Method: httpkit.Post, H: s.markRead},
		{Path: "/api/chats/{jid}/presence", Method: httpkit.Post, H: s.setPresence},
		{Path: "/api/contacts/{number}", Method: httpkit.Get, H: s.contact},
	}, s.keyed)
	s.contactRoutes(r)
	s.groupRoutes(r)
	s.channelRoutes(r)
	s.labelRoutes(r)
	if s.Events.Log != nil {
		r.Handle("/api/events", s.keyed(s.streamEvents)).Methods(httpkit.Get)
	}
}

// groupRoutes are group administration.
func (s *server) groupRoutes(r *mux.Router) {
	httpkit.Mount(r, []httpkit.Route{
		{Path: "/api/groups", Method: httpkit.Post, H: s.createGroup},
		{Path: "/api/groups/join", Method: httpkit.Post, H: s.joinGroup},
		{Path: "/api/groups/{jid}", Method: httpkit.Get, H: s.getGroup},
		{Path: "/api/groups/{jid}", Method: httpkit.Patch, H: s.updateGroup},
		{Path: "/api/groups/{jid}/photo", Method: http.MethodPut, H: s.setGroupPhoto},
		{Path: "/api/groups/{jid}/photo", Method: httpkit.Del, H: s.deleteGroupPhoto},
		{Path: "/api/groups/{jid}/participants", Method: httpkit.Post, H: s.changeMembers},
		{Path: "/api/groups/{jid}/invite-link", Method: httpkit.Get, H: s.getInviteLink},
		{Path: "/api/groups/{jid}/invite-link", Method: httpkit.Del, H: s.revokeInviteLink},
		{Path: "/api/groups/{jid}/leave", Method: httpkit.Post, H: s.leaveGroup},
	}, s.keyed)
}

// keyed guards h with the API key.
func (s *server) keyed(h httpkit.HandlerFunc) http.Handler {
	return s.Handler(s.RequireAPIKey(h))
}

// MountDashboardReads adds the reads of the dashboard's data API under
// prefix, checking no credential (the dashboard checks its session):
// GET /messages with what each sent message said, GET /media/{id}; the
// calls and blocks (mountDashboardContacts), whose changes the dashboard
// lets through only with the session's CSRF token; and when the bridge has
// them GET /labels (with their chats) and GET /channels (paced like the
// API's).
func MountDashboardReads(r *mux.Router, prefix string, d Deps, c httpkit.Common) {
	s := newServer(d, c)
	r.Handle(prefix+"/messages", s.Handler(s.listSaid)).Methods(httpkit.Get)
	r.Handle(prefix+"/media/{id}", s.Handler(s.getMedia)).Methods(httpkit.Get)
	mountDashboardContacts(r, prefix, s)
	if s.Labels != nil {
		r.Handle(prefix+"/labels", s.Handler(s.listLabels)).Methods(httpkit.Get)
	}
	if s.Channels != nil {
		r.Handle(prefix+"/channels", s.Handler(s.listChannels)).Methods(httpkit.Get)
	}
}
