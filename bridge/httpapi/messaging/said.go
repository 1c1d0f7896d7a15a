package messaging

import (
	"context"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/inbox"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// SaidLog is the message log with what each message said
// (*sendqueue.Queue): the dashboard shows the account's own messages as it
// shows received ones.
type SaidLog interface {
	ListSaid(ctx context.Context, f sendqueue.Filter) ([]sendqueue.Said, string, error)
}

// saidJSON is a logged message as /api/messages has it, and what it said.
type saidJSON struct {
	MessageJSON
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
	out := saidJSON{MessageJSON: toMessageJSON(m.Message), Text: m.Text, FileName: m.FileName, MimeType: m.MimeType,
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
	return httpkit.WriteJSON(w, http.StatusOK, out)
}
