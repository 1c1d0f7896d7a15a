package messaging

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/inbox"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// IncomingHistory is what the account received (*inbox.Inbox).
type IncomingHistory interface {
	// List returns a page of the history, newest first, and the next
	// page's cursor.
	List(ctx context.Context, f inbox.Filter) ([]inbox.Entry, string, error)
	// Replay enqueues the webhook events received since then again,
	// under their original webhook-ids, for subscription (empty: every
	// enabled one).
	Replay(ctx context.Context, since time.Time, subscription string) (inbox.Replayed, error)
	// Received finds the chat and sender of a received message by its
	// WhatsApp id, so that a reaction to it needs no ?chat=.
	Received(ctx context.Context, whatsappID string) (chat, sender bridge.Recipient, found bool, err error)
	// HasChat reports whether the account received anything in chat: a
	// read mark or a chat state goes only into a chat the account has.
	HasChat(ctx context.Context, chat bridge.Recipient) (bool, error)
}

// Page sizes of GET /api/messages.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

type MessageJSON struct {
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
	// Poll is a poll's question and current tally (GET of one message).
	Poll *pollJSON `json:"poll,omitempty"`
}

func toMessageJSON(m bridge.Message) MessageJSON {
	return MessageJSON{ID: m.ID, WhatsAppID: m.WhatsAppID, Recipient: m.Recipient.JID(), Type: string(m.Type),
		Status: string(m.Status), RetryCount: m.RetryCount, Attempts: m.Attempts, LastError: m.LastError,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

func (s *server) getMessage(w http.ResponseWriter, r *http.Request) error {
	id := mux.Vars(r)["id"]
	m, err := s.Messages.Get(r.Context(), id)
	if bridge.ErrorKind(err) == bridge.KindNotFound && s.Targets != nil {
		// Its whatsapp_id: the id the Cloud API door answers a send with.
		if byWhatsApp, ferr := s.Targets.FindMessage(r.Context(), id); ferr == nil {
			m, err = byWhatsApp, nil
		}
	}
	if err != nil {
		return err
	}
	if err := bridge.CallerOf(r.Context()).RequireChat(m.Recipient); err != nil {
		return err
	}
	out := toMessageJSON(m)
	if out.Poll, err = s.pollOf(r.Context(), m); err != nil {
		return err
	}
	return httpkit.WriteJSON(w, http.StatusOK, out)
}

func (s *server) listMessages(w http.ResponseWriter, r *http.Request) error {
	q, err := parseListQuery(r)
	if err != nil {
		return err
	}
	if err := listableChat(bridge.CallerOf(r.Context()), q.Chat); err != nil {
		return err
	}
	if q.incoming {
		return s.listIncoming(w, r, inbox.Filter{Chat: q.Chat, Since: q.Since, Limit: q.Limit, Cursor: q.Cursor})
	}
	msgs, next, err := s.Messages.List(r.Context(), q.Filter)
	if err != nil {
		return err
	}
	out := struct {
		Messages   []MessageJSON `json:"messages"`
		NextCursor string        `json:"next_cursor,omitempty"`
	}{Messages: make([]MessageJSON, len(msgs)), NextCursor: next}
	for i, m := range msgs {
		out.Messages[i] = toMessageJSON(m)
	}
	return httpkit.WriteJSON(w, http.StatusOK, out)
}

// incomingJSON is an entry of the incoming history: the event's fields
// that every kind has, and the webhook event itself (payload) for the
// rest (media, location, target_id, …).
type incomingJSON struct {
	WebhookID  string          `json:"webhook_id"`
	Event      string          `json:"event"`
	WhatsAppID string          `json:"whatsapp_id"`
	Type       string          `json:"type"`
	Chat       string          `json:"chat"`
	From       string          `json:"from"`
	FromLID    *string         `json:"from_lid"`
	FromPhone  *string         `json:"from_phone"`
	PushName   string          `json:"push_name"`
	Text       string          `json:"text"`
	Timestamp  string          `json:"timestamp"`
	ReceivedAt string          `json:"received_at"`
	Payload    json.RawMessage `json:"payload"`
}

func toIncomingJSON(e inbox.Entry) incomingJSON {
	return incomingJSON{WebhookID: e.WebhookID, Event: e.Event, WhatsAppID: e.WhatsAppID, Type: e.Type, Chat: e.Chat,
		From: e.From, FromLID: orNull(e.FromLID), FromPhone: orNull(e.FromPhone), PushName: e.PushName, Text: e.Text,
		Timestamp: bridge.FormatTime(e.Timestamp), ReceivedAt: bridge.FormatTime(e.ReceivedAt), Payload: e.Payload}
}

// orNull is s, or null when empty.
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (s *server) listIncoming(w http.ResponseWriter, r *http.Request, f inbox.Filter) error {
	entries, next, err := s.Inbox.List(r.Context(), f)
	if err != nil {
		return err
	}
	out := struct {
		Messages   []incomingJSON `json:"messages"`
		NextCursor string         `json:"next_cursor,omitempty"`
	}{Messages: make([]incomingJSON, len(entries)), NextCursor: next}
	for i, e := range entries {
		out.Messages[i] = toIncomingJSON(e)
	}
	return httpkit.WriteJSON(w, http.StatusOK, out)
}

// listQuery is the query of GET /api/messages: the direction, and the
// filter (a status only for outgoing messages).
type listQuery struct {
	incoming bool
	sendqueue.Filter
}

// parseListQuery reads ?direction=&chat=&status=&since=&limit=&cursor= (and
// tolerates the apiKey that authenticated the request).
func parseListQuery(r *http.Request) (listQuery, error) {
	q := listQuery{Filter: sendqueue.Filter{Limit: DefaultPageSize}}
	// r.URL.Query drops what it cannot parse: a malformed cursor would
	// silently become page 1, and a client would loop.
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return q, httpkit.InvalidQuery("the query string is malformed")
	}
	for name, vs := range values {
		if len(vs) != 1 {
			return q, bridge.Invalid(bridge.CodeInvalidQuery, "%s must be given once", bridge.Truncate(name, 32))
		}
		if err := q.set(name, vs[0]); err != nil {
			return q, err
		}
	}
	if q.incoming && q.Status != "" {
		return q, bridge.Invalid(bridge.CodeInvalidStatus, "status filters outgoing messages; direction=in has none")
	}
	return q, nil
}

// set reads one parameter.
func (q *listQuery) set(name, v string) error {
	switch name {
	case "apiKey":
	case "direction":
		if v != "in" && v != "out" {
			return bridge.Invalid(bridge.CodeInvalidDirection, "direction must be in (received) or out (sent, the default)")
		}
		q.incoming = v == "in"
	case "chat":
		chat, err := parseChat(v)
		if err != nil {
			return err
		}
		q.Chat = chat
	case "status":
		st, ok := bridge.ParseStatus(v)
		if !ok {
			return bridge.Invalid(bridge.CodeInvalidStatus, "status must be Queued, Sent, Delivered, Read or Failed")
		}
		q.Status = st
	case "since":
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return bridge.Invalid(bridge.CodeInvalidSince, "since must be an RFC 3339 time, e.g. 2026-11-21T10:00:00Z")
		}
		q.Since = t
	case "limit":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPageSize {
			return bridge.Invalid(bridge.CodeInvalidLimit, "limit must be a number from 1 to %d", MaxPageSize)
		}
		q.Limit = n
	case "cursor":
		if v == "" {
			return bridge.Invalid(bridge.CodeInvalidCursor, "cursor must be one this API returned; leave it out for the first page")
		}
		q.Cursor = v
	default:
		return bridge.Invalid(bridge.CodeInvalidQuery, "unknown parameter %q", bridge.Truncate(name, 32))
	}
	return nil
}
