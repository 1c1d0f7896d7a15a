package httpapi

import (
	"context"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/inbox"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// DashboardAPIPrefix is where DashboardAPI answers: under /dashboard/, so
// that the browser sends the dashboard's session cookie (its path) and
// nothing of the API's credentials.
const DashboardAPIPrefix = "/dashboard/api"

// DashboardAPI is what the dashboard's pages read and do, the API's own
// handlers over the same ports, under DashboardAPIPrefix:
//
//	GET    /state, /analytics/delivery, /subscriptions, /webhooks/failed, /audit
//	GET    /messages (?direction=…&chat=…: what each sent message said too), /media/{id}
//	GET    /calls (the latest calls and blocks), /blocklist
//	POST   /webhooks/{id}/redeliver, /webhooks/replay, /contacts/{number}/block
//	DELETE /logs, /audit/{id}, /contacts/{number}/block
//
// It checks no credential: the dashboard serves it only to a signed-in
// browser, and the changes only with the session's CSRF token. Answers are
// never cached, media included (its files are other people's messages).
func DashboardAPI(d Deps) http.Handler {
	s := newServer(d)
	r := NewMux(d.Log)
	s.adminRoutes(r, DashboardAPIPrefix, s.handle, func(action audit.Action, h HandlerFunc) http.Handler {
		return s.Audit.Middleware(action, s.handle(h))
	})
	r.Handle(DashboardAPIPrefix+"/messages", s.handle(s.listSaid)).Methods(get)
	r.Handle(DashboardAPIPrefix+"/media/{id}", s.handle(s.getMedia)).Methods(get)
	r.Handle(DashboardAPIPrefix+"/calls", s.handle(s.listCalls)).Methods(get)
	r.Handle(DashboardAPIPrefix+"/blocklist", s.handle(s.blocklist)).Methods(get)
	r.Handle(DashboardAPIPrefix+"/contacts/{number}/block", s.handle(s.blockContact)).Methods(post)
	r.Handle(DashboardAPIPrefix+"/contacts/{number}/block", s.handle(s.unblockContact)).Methods(del)
	return noStore(r) // the client's address is resolved already: the dashboard is served inside NewRouter
}

// SaidLog is the message log with what each message said
// (*sendqueue.Queue): the dashboard shows the account's own messages as it
// shows received ones.
type SaidLog interface {
	ListSaid(ctx context.Context, f sendqueue.Filter) ([]sendqueue.Said, string, error)
}

// saidJSON is a logged message as /api/messages has it, and what it said.
type saidJSON struct {
	messageJSON
	Text     string         `json:"text"`
	FileName string         `json:"file_name,omitempty"`
	MimeType string         `json:"mimetype,omitempty"`
	ReplyTo  string         `json:"reply_to,omitempty"`
	TargetID string         `json:"target_id,omitempty"`
	Emoji    string         `json:"emoji,omitempty"`
	Poll     *saidPollJSON  `json:"poll,omitempty"`
	Location *saidPlaceJSON `json:"location,omitempty"`
	Contact  string         `json:"contact,omitempty"` // the card's display name
}

type saidPollJSON struct {
	Question string   `json:"question"`
	Options  []string `json:"options"`
}

type saidPlaceJSON struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
}

func toSaidJSON(m sendqueue.Said) saidJSON {
	out := saidJSON{messageJSON: toMessageJSON(m.Message), Text: m.Text, FileName: m.FileName, MimeType: m.MimeType,
		ReplyTo: m.ReplyTo, TargetID: m.TargetID, Emoji: m.Emoji}
	if p := m.Poll; p != nil {
		out.Poll = &saidPollJSON{Question: p.Question, Options: p.Options}
	}
	if l := m.Location; l != nil {
		out.Location = &saidPlaceJSON{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
	}
	if c := m.Contact; c != nil {
		out.Contact = c.DisplayName
	}
	return out
}

// listSaid is GET /api/messages with what each sent message said, when the
// log can tell (a log without ListSaid answers as the API does).
func (s *server) listSaid(w http.ResponseWriter, r *http.Request) error {
	said, ok := s.Messages.(SaidLog)
	if !ok {
		return s.listMessages(w, r)
	}
	q, err := parseListQuery(r)
	if err != nil {
		return err
	}
	if q.incoming {
		return s.listIncoming(w, r, inbox.Filter{Chat: q.Chat, Since: q.Since, Limit: q.Limit, Cursor: q.Cursor})
	}
	msgs, next, err := said.ListSaid(r.Context(), q.Filter)
	if err != nil {
		return err
	}
	out := struct {
		Messages   []saidJSON `json:"messages"`
		NextCursor string     `json:"next_cursor,omitempty"`
	}{Messages: make([]saidJSON, len(msgs)), NextCursor: next}
	for i, m := range msgs {
		out.Messages[i] = toSaidJSON(m)
	}
	return WriteJSON(w, http.StatusOK, out)
}

// noStore keeps a handler's answers out of every cache, whatever
// Cache-Control the handler set (the media endpoint's is private).
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(noStoreWriter{w}, r)
	})
}

type noStoreWriter struct{ http.ResponseWriter }

func (w noStoreWriter) WriteHeader(code int) {
	w.Header().Set("Cache-Control", "no-store")
	w.ResponseWriter.WriteHeader(code)
}

func (w noStoreWriter) Write(b []byte) (int, error) {
	w.Header().Set("Cache-Control", "no-store")
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w noStoreWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
