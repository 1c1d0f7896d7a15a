package admin

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// DeadLetters is the webhook outbox's store of events whose delivery gave
// up (*webhook.Outbox).
type DeadLetters interface {
	// Failed lists the dead letters, newest first.
	Failed(ctx context.Context) ([]webhook.DeadLetter, error)
	// Redeliver makes dead letter id pending again: webhook.ErrUnknown when
	// there is no such event, webhook.ErrNotDead when it is not dead.
	Redeliver(ctx context.Context, id int64) error
}

type deadLetterJSON struct {
	ID           int64  `json:"id"`
	Subscription string `json:"subscription"`
	WebhookID    string `json:"webhook_id"`
	Event        string `json:"event"`
	Attempts     int    `json:"attempts"`
	LastError    string `json:"last_error"`
	CreatedAt    string `json:"created_at"`
}

var errUnknownEvent = bridge.Errorf(bridge.KindNotFound, bridge.CodeNotFound, "no such webhook event")

func (s *server) listDeadLetters(w http.ResponseWriter, r *http.Request) error {
	dead, err := s.Webhooks.Failed(r.Context())
	if err != nil {
		return bridge.Internal(bridge.CodeInternal, "could not read the webhook outbox", err)
	}
	out := make([]deadLetterJSON, len(dead))
	for i, d := range dead {
		out[i] = deadLetterJSON{ID: d.ID, Subscription: d.Subscription, WebhookID: d.WebhookID, Event: d.Event, Attempts: d.Attempts,
			LastError: d.LastError, CreatedAt: bridge.FormatTime(d.CreatedAt)}
	}
	return httpkit.WriteJSON(w, http.StatusOK, out)
}

func (s *server) redeliver(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(mux.Vars(r)["id"], 10, 64)
	if err != nil || id <= 0 {
		return errUnknownEvent
	}
	if err := deadLetterError(s.Webhooks.Redeliver(r.Context(), id)); err != nil {
		return err
	}
	return httpkit.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "status": "pending"})
}

// deadLetterError is an error of the outbox as a *bridge.Error.
func deadLetterError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, webhook.ErrUnknown):
		return errUnknownEvent
	case errors.Is(err, webhook.ErrNotDead):
		return bridge.Errorf(bridge.KindConflict, bridge.CodeNotDead, "the webhook event is not a dead letter")
	}
	if _, ok := errors.AsType[*bridge.Error](err); ok {
		return err
	}
	return bridge.Internal(bridge.CodeInternal, "could not update the webhook outbox", err)
}

func (s *server) replay(w http.ResponseWriter, r *http.Request) error {
	q, err := httpkit.StrictQuery(r, "since", "subscription")
	if err != nil {
		return err
	}
	subscription, named := q["subscription"]
	if named {
		if err := webhook.ValidID(subscription); err != nil {
			return bridge.Errorf(bridge.KindNotFound, bridge.CodeSubscriptionNotFound, "no such subscription")
		}
	}
	text, given := q["since"]
	since, err := parseSince(text, given, s.Now())
	if err != nil {
		return err
	}
	done, err := s.Inbox.Replay(r.Context(), since, subscription)
	if err != nil {
		return err
	}
	return httpkit.WriteJSON(w, http.StatusOK, map[string]any{
		"since": bridge.FormatTime(since), "enqueued": done.Enqueued, "already_pending": done.AlreadyPending,
	})
}

// parseSince accepts an RFC 3339 time that is not after now; it is
// required.
func parseSince(text string, given bool, now time.Time) (time.Time, error) {
	if !given {
		return time.Time{}, bridge.Invalid(bridge.CodeInvalidSince, "since is required: an RFC 3339 time, e.g. 2026-11-21T10:00:00Z")
	}
	t, err := time.Parse(time.RFC3339, text)
	if err != nil {
		return time.Time{}, bridge.Invalid(bridge.CodeInvalidSince, "since must be an RFC 3339 time, e.g. 2026-11-21T10:00:00Z")
	}
	if t.After(now) {
		return time.Time{}, bridge.Invalid(bridge.CodeInvalidSince, "since is in the future")
	}
	return t, nil
}
