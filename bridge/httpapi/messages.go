package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// Page sizes of GET /api/messages.
const (
	defaultPageSize = 50
	maxPageSize     = 500
)

type messageJSON struct {
	ID         string    `json:"id"`
	WhatsAppID string    `json:"whatsapp_id"`
	Recipient  string    `json:"recipient"` // the JID, as the log has always shown it
	Type       string    `json:"type"`
	Status     string    `json:"status"`
	RetryCount int       `json:"retry_count"`
	Attempts   int       `json:"attempts"`
	LastError  string    `json:"last_error"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

func toMessageJSON(m bridge.Message) messageJSON {
	return messageJSON{ID: m.ID, WhatsAppID: m.WhatsAppID, Recipient: m.Recipient.JID(), Type: string(m.Type),
		Status: string(m.Status), RetryCount: m.RetryCount, Attempts: m.Attempts, LastError: m.LastError,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

func (s *server) getMessage(w http.ResponseWriter, r *http.Request) error {
	m, err := s.Messages.Get(r.Context(), mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, toMessageJSON(m))
}

func (s *server) listMessages(w http.ResponseWriter, r *http.Request) error {
	f, err := parseFilter(r)
	if err != nil {
		return err
	}
	msgs, next, err := s.Messages.List(r.Context(), f)
	if err != nil {
		return err
	}
	out := struct {
		Messages   []messageJSON `json:"messages"`
		NextCursor string        `json:"next_cursor,omitempty"`
	}{Messages: make([]messageJSON, len(msgs)), NextCursor: next}
	for i, m := range msgs {
		out.Messages[i] = toMessageJSON(m)
	}
	return WriteJSON(w, http.StatusOK, out)
}

// parseFilter reads ?status=&since=&limit=&cursor= (and tolerates the
// apiKey that authenticated the request).
func parseFilter(r *http.Request) (sendqueue.Filter, error) {
	f := sendqueue.Filter{Limit: defaultPageSize}
	// r.URL.Query drops what it cannot parse: a malformed cursor would
	// silently become page 1, and a client would loop.
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return f, invalidQuery("the query string is malformed")
	}
	for name, vs := range values {
		if len(vs) != 1 {
			return f, bridge.Invalid("invalid_query", "%s must be given once", truncate(name, 32))
		}
		v := vs[0]
		switch name {
		case "apiKey":
		case "status":
			st, ok := bridge.ParseStatus(v)
			if !ok {
				return f, bridge.Invalid("invalid_status", "status must be Queued, Sent, Delivered, Read or Failed")
			}
			f.Status = st
		case "since":
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return f, bridge.Invalid("invalid_since", "since must be an RFC 3339 time, e.g. 2026-11-21T10:00:00Z")
			}
			f.Since = t
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxPageSize {
				return f, bridge.Invalid("invalid_limit", "limit must be a number from 1 to %d", maxPageSize)
			}
			f.Limit = n
		case "cursor":
			if v == "" {
				return f, bridge.Invalid("invalid_cursor", "cursor must be one this API returned; leave it out for the first page")
			}
			f.Cursor = v
		default:
			return f, bridge.Invalid("invalid_query", "unknown parameter %q", truncate(name, 32))
		}
	}
	return f, nil
}
