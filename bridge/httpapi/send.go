package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// Messages is what the API needs of the send queue (*sendqueue.Queue).
type Messages interface {
	Submit(ctx context.Context, req sendqueue.Request) (sendqueue.Result, error)
	StoreResponse(ctx context.Context, key string, resp sendqueue.StoredResponse) error
	Get(ctx context.Context, id string) (sendqueue.Message, error)
	List(ctx context.Context, f sendqueue.Filter) ([]sendqueue.Message, string, error)
}

// SendConfig configures POST /send.
type SendConfig struct {
	APIKey      bridge.Secret
	SpoolDir    string
	MaxFileSize int64
}

const (
	apiKeyHeader      = "X-Api-Key" //nolint:gosec // a header name, not a credential
	idempotencyHeader = "Idempotency-Key"
	maxIdempotencyKey = 255
)

type sentItemJSON struct {
	ID         string `json:"id"`
	WhatsAppID string `json:"whatsapp_id"`
	Type       string `json:"type"`
	Status     string `json:"status"`
	RetryCount int    `json:"retry_count"`
}

type sendResponseJSON struct {
	Messages []sentItemJSON `json:"messages"`
}

// POST /send
func sendHandler(q Messages, cfg SendConfig, log logr.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// A credential in the header or query is checked before the body is
		// read; one in the body only after, so nothing is sent for a wrong one.
		outside := r.Header.Get(apiKeyHeader)
		if outside == "" {
			outside = r.URL.Query().Get("apiKey")
		}
		if outside != "" && !credentialMatches(outside, cfg.APIKey) {
			unauthorized(w)
			return
		}
		key := r.Header.Get(idempotencyHeader)
		if key != "" && !validIdempotencyKey(key) {
			writeError(w, http.StatusBadRequest, "invalid_idempotency_key", "Idempotency-Key must be 1-255 printable ASCII characters")
			return
		}
		// The largest honest body: every item a full file, plus the fields.
		r.Body = http.MaxBytesReader(w, r.Body, maxItems*(cfg.MaxFileSize+64<<10)+maxFieldBytes)
		form, ferr := readSendForm(r, cfg.SpoolDir, cfg.MaxFileSize)
		if ferr != nil {
			if ferr.status == http.StatusRequestEntityTooLarge {
				w.Header().Set("Connection", "close") // do not read the rest
			}
			writeError(w, ferr.status, ferr.code, ferr.message)
			return
		}
		if outside == "" && !credentialMatches(form.apiKey, cfg.APIKey) {
			form.discard()
			unauthorized(w)
			return
		}
		req, verr := form.toRequest()
		if verr != nil {
			form.discard()
			writeError(w, verr.status, verr.code, verr.message)
			return
		}
		req.IdempotencyKey = key
		res, err := q.Submit(r.Context(), req)
		if err != nil {
			form.discard()
			log.Error(err, "store send request")
			writeError(w, http.StatusInternalServerError, "store_failed", "the request could not be stored; nothing will be sent")
			return
		}
		if res.Replay && res.Stored != nil {
			writeRaw(w, res.Stored.Status, res.Stored.Body)
			return
		}
		status, body := renderSendResponse(res)
		if key != "" && !res.Replay {
			if err := q.StoreResponse(context.WithoutCancel(r.Context()), key, sendqueue.StoredResponse{Status: status, Body: body}); err != nil {
				log.Error(err, "store idempotent response") // a repeat then answers from the messages
			}
		}
		writeRaw(w, status, body)
	}
}

// renderSendResponse is 200 when every item was sent on its immediate
// attempt, 202 when any waits for a retry.
func renderSendResponse(res sendqueue.Result) (int, []byte) {
	out := sendResponseJSON{Messages: make([]sentItemJSON, len(res.Messages))}
	allSent := true
	for i, m := range res.Messages {
		status := "queued"
		switch m.Status {
		case sendqueue.StatusSent, sendqueue.StatusDelivered, sendqueue.StatusRead:
			status = "sent"
		case sendqueue.StatusFailed:
			status = "failed"
		}
		allSent = allSent && status == "sent"
		out.Messages[i] = sentItemJSON{ID: m.ID, WhatsAppID: m.WhatsAppID, Type: m.Type, Status: status, RetryCount: m.RetryCount}
	}
	code := http.StatusAccepted
	if allSent {
		code = http.StatusOK
	}
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(out) // plain structs: cannot fail
	return code, buf.Bytes()
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func validIdempotencyKey(k string) bool {
	return len(k) <= maxIdempotencyKey && strings.IndexFunc(k, func(r rune) bool { return r < '!' || r > '~' }) < 0
}
