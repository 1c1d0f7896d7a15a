package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge/webhook"
)

type deadLetterJSON struct {
	ID        int64  `json:"id"`
	WebhookID string `json:"webhook_id"`
	Event     string `json:"event"`
	Attempts  int    `json:"attempts"`
	LastError string `json:"last_error"`
	CreatedAt string `json:"created_at"`
}

// FailedHandler serves GET /api/admin/webhooks/failed: the dead letters,
// newest first.
func FailedHandler(o *webhook.Outbox, log logr.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dead, err := o.Failed(r.Context())
		if err != nil {
			log.Error(err, "list webhook dead letters")
			Error(w, http.StatusInternalServerError, "internal", "could not read the webhook outbox")
			return
		}
		out := make([]deadLetterJSON, len(dead))
		for i, d := range dead {
			out[i] = deadLetterJSON{ID: d.ID, WebhookID: d.WebhookID, Event: d.Event, Attempts: d.Attempts,
				LastError: d.LastError, CreatedAt: d.CreatedAt.UTC().Format(timestampLayout)}
		}
		Write(w, http.StatusOK, out)
	})
}

// RedeliverHandler serves POST /api/admin/webhooks/{id}/redeliver.
func RedeliverHandler(o *webhook.Outbox, log logr.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(mux.Vars(r)["id"], 10, 64)
		if err != nil || id <= 0 {
			Error(w, http.StatusNotFound, "not_found", webhook.ErrUnknown.Error())
			return
		}
		switch err := o.Redeliver(r.Context(), id); {
		case err == nil:
			Write(w, http.StatusOK, map[string]any{"id": id, "status": "pending"})
		case errors.Is(err, webhook.ErrUnknown):
			Error(w, http.StatusNotFound, "not_found", err.Error())
		case errors.Is(err, webhook.ErrNotDead):
			Error(w, http.StatusConflict, "not_dead", err.Error())
		default:
			log.Error(err, "redeliver webhook event")
			Error(w, http.StatusInternalServerError, "internal", "could not update the webhook outbox")
		}
	})
}
