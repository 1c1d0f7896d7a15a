package httpapi

import (
	"errors"
	"net/http"
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
	Recipient  string    `json:"recipient"`
	Type       string    `json:"type"`
	Status     string    `json:"status"`
	RetryCount int       `json:"retry_count"`
	Attempts   int       `json:"attempts"`
	LastError  string    `json:"last_error"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

func toMessageJSON(m sendqueue.Message) messageJSON {
	return messageJSON{ID: m.ID, WhatsAppID: m.WhatsAppID, Recipient: m.Recipient, Type: m.Type, Status: string(m.Status),
		RetryCount: m.RetryCount, Attempts: m.Attempts, LastError: m.LastError, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

// requireAPIKey admits requests carrying the API key in the X-Api-Key
// header or the apiKey query parameter (reads have no body).
func requireAPIKey(key bridge.Secret, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		presented := r.Header.Get(apiKeyHeader)
		if presented == "" {
			presented = r.URL.Query().Get("apiKey")
		}
		if !credentialMatches(presented, key) {
			unauthorized(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// GET /api/messages/{id}
func getMessage(q Messages) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m, err := q.Get(r.Context(), mux.Vars(r)["id"])
		if errors.Is(err, sendqueue.ErrNotFound) {
			writeError(w, http.StatusNotFound, "not_found", "no message with this id")
			return
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, "read_failed", "the message log could not be read")
			return
		}
		writeJSON(w, toMessageJSON(m))
	}
}

// GET /api/messages?status=&since=&limit=&cursor=
func listMessages(q Messages) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f, apiErr := parseFilter(r)
		if apiErr != nil {
			writeError(w, apiErr.status, apiErr.code, apiErr.message)
			return
		}
		msgs, next, err := q.List(r.Context(), f)
		if errors.Is(err, sendqueue.ErrBadCursor) {
			writeError(w, http.StatusBadRequest, "invalid_cursor", err.Error())
			return
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, "read_failed", "the message log could not be read")
			return
		}
		out := struct {
			Messages   []messageJSON `json:"messages"`
			NextCursor string        `json:"next_cursor,omitempty"`
		}{Messages: make([]messageJSON, len(msgs)), NextCursor: next}
		for i, m := range msgs {
			out.Messages[i] = toMessageJSON(m)
		}
		writeJSON(w, out)
	}
}

func parseFilter(r *http.Request) (sendqueue.Filter, *apiError) {
	f := sendqueue.Filter{Limit: defaultPageSize}
	for name, vs := range r.URL.Query() {
		if len(vs) != 1 {
			return f, badRequest("invalid_query", "%s must be given once", truncate(name, 32))
		}
		v := vs[0]
		switch name {
		case "apiKey":
		case "status":
			st, ok := sendqueue.ParseStatus(v)
			if !ok {
				return f, badRequest("invalid_status", "status must be Queued, Sent, Delivered, Read or Failed")
			}
			f.Status = st
		case "since":
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return f, badRequest("invalid_since", "since must be an RFC 3339 time, e.g. 2026-11-21T10:00:00Z")
			}
			f.Since = t
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxPageSize {
				return f, badRequest("invalid_limit", "limit must be a number from 1 to %d", maxPageSize)
			}
			f.Limit = n
		case "cursor":
			f.Cursor = v
		default:
			return f, badRequest("invalid_query", "unknown parameter %q", truncate(name, 32))
		}
	}
	return f, nil
}
