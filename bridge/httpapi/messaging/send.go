package messaging

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// Messages is what the API needs of the send queue (*sendqueue.Queue).
type Messages interface {
	sendqueue.Submitter
	Get(ctx context.Context, id string) (bridge.Message, error)
	List(ctx context.Context, f sendqueue.Filter) ([]bridge.Message, string, error)
}

// SendConfig configures POST /send.
type SendConfig struct {
	SpoolDir    string
	MaxFileSize int64
	// SpoolMaxBytes bounds the bytes in SpoolDir (SPOOL_MAX_BYTES); an
	// upload that would pass it is answered 507. 0: unbounded.
	SpoolMaxBytes int64
}

const idempotencyHeader = "Idempotency-Key"

// sentItemJSON is one item of a send's (or an action's) answer: the log
// entry's status spelled as the log and the webhooks spell it; a Failed
// item's reason; a Queued item's place in the queue and when it is expected
// to go.
type sentItemJSON struct {
	ID            string `json:"id"`
	WhatsAppID    string `json:"whatsapp_id"`
	Type          string `json:"type"`
	Status        string `json:"status"`
	RetryCount    int    `json:"retry_count"`
	Reason        string `json:"reason,omitempty"`
	QueuePosition int    `json:"queue_position,omitempty"`
	ScheduledAt   string `json:"scheduled_at,omitempty"`
}

// SendResponseJSON is the answer to a send or an action. Error is set only
// when every item failed at once (422): its first item's reason, so that a
// client that reads only the error shape learns it too.
type SendResponseJSON struct {
	Error    *httpkit.ErrorDetail `json:"error,omitempty"`
	Messages []sentItemJSON       `json:"messages"`
}

// send is POST /send. A credential in the header or query is checked
// before the body is read; one in the form as soon as it is read, before
// any file part is stored (readSendForm). An address locked for failed
// credentials is refused before its body is read.
func (s *server) send(w http.ResponseWriter, r *http.Request) error {
	var caller bridge.Caller
	req, err := s.readSend(w, r, &caller)
	if err == nil {
		// The key may send, and to this chat: the use case checks it.
		ctx := bridge.WithCaller(r.Context(), caller)
		err = answer(w)(s.sending().Submit(ctx, req, renderSend))
		s.AuditKeyUse(r, caller, err)
		return err
	}
	// The body may be unread: a client that sent no valid key (or sends
	// slowly) must not hold the connection for its rest.
	w.Header().Set("Connection", "close")
	s.AuditKeyUse(r, caller, err)
	return err
}

// sending is the send use case over the API's queue: every door ends in
// it, so they share the validation, the queue, its idempotency keys and the
// stored answers.
func (s *server) sending() sendqueue.Sending {
	return sendqueue.Sending{Queue: s.Messages, Log: s.Log, Budget: s.Credentials.Keys}
}

// answer returns a function that writes the use case's answer, or returns
// its error for Handle to answer.
func answer(w http.ResponseWriter) func(sendqueue.StoredResponse, error) error {
	return func(a sendqueue.StoredResponse, err error) error {
		if err != nil {
			return err
		}
		httpkit.WriteBody(w, a.Status, a.Body)
		return nil
	}
}

// renderSend is the answer of POST /send and POST /api/messages.
func renderSend(res sendqueue.Result) (sendqueue.StoredResponse, error) {
	status, body := renderSendResponse(res)
	return sendqueue.StoredResponse{Status: status, Body: body}, nil
}

// idempotencyKey is the request's Idempotency-Key header, checked; "" when
// none.
func idempotencyKey(r *http.Request) (string, error) {
	return sendqueue.ParseIdempotencyKey(r.Header.Get(idempotencyHeader))
}

// readSend authorizes POST /send, setting caller to who presented the key,
// and reads its body into a valid request with its idempotency key; on
// error nothing stays spooled.
func (s *server) readSend(w http.ResponseWriter, r *http.Request, caller *bridge.Caller) (sendqueue.Request, error) {
	authorize := func(k string) error {
		c, err := s.Credentials.CheckAPIKey(w, r, k)
		if err != nil {
			return err
		}
		*caller = c
		return c.Require(bridge.ScopeSend) // before any file is spooled
	}
	outside := httpkit.PresentedAPIKey(r)
	if outside != "" {
		if err := authorize(outside); err != nil {
			return sendqueue.Request{}, err
		}
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return sendqueue.Request{}, err
	}
	// The largest honest body: every item a full file, plus the fields.
	r.Body = http.MaxBytesReader(w, r.Body, MaxItems*(s.Send.MaxFileSize+64<<10)+MaxFieldBytes)
	form, err := readSendForm(r, s.space, s.Send.MaxFileSize, outside != "", authorize)
	if err != nil {
		return sendqueue.Request{}, err
	}
	if !form.authorized {
		err = authorize("") // a body without any key
	}
	var req sendqueue.Request
	if err == nil {
		req, err = form.toRequest()
	}
	if err != nil {
		form.discard()
		return sendqueue.Request{}, err
	}
	req.IdempotencyKey = key
	return req, nil
}

// renderSendResponse answers with every item's status: 202 when any item
// is Queued (it waits for the pace, a retry or a restriction), 422 when
// every item Failed at once (e.g. not_on_whatsapp: nothing will be sent),
// 200 otherwise (every item was sent, or some sent and some failed; each
// item says which).
func renderSendResponse(res sendqueue.Result) (int, []byte) {
	out := SendResponseJSON{Messages: make([]sentItemJSON, len(res.Messages))}
	queued, failed := false, 0
	for i, m := range res.Messages {
		out.Messages[i] = sentItem(m, placeAt(res.Places, i))
		queued = queued || m.Status == bridge.StatusQueued || m.Status == bridge.StatusAwaitingApproval
		if m.Status == bridge.StatusFailed {
			failed++
		}
	}
	code := http.StatusOK
	switch {
	case queued:
		code = http.StatusAccepted
	case failed == len(res.Messages):
		code = http.StatusUnprocessableEntity
		reason := out.Messages[0].Reason
		out.Error = &httpkit.ErrorDetail{Code: reason, Message: failureMessage(reason)}
	}
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(out) // plain structs: cannot fail
	return code, buf.Bytes()
}

func sentItem(m bridge.Message, p sendqueue.Place) sentItemJSON {
	item := sentItemJSON{ID: m.ID, WhatsAppID: m.WhatsAppID, Type: string(m.Type), Status: string(m.Status),
		RetryCount: m.RetryCount, Reason: m.FailReason()}
	if m.Status == bridge.StatusQueued && p.Position > 0 {
		item.QueuePosition, item.ScheduledAt = p.Position, bridge.FormatTime(p.ScheduledAt)
	}
	return item
}

// placeAt is places[i], or the zero Place when the queue gave none (a
// replay of a request whose answer was not recorded).
func placeAt(places []sendqueue.Place, i int) sendqueue.Place {
	if i < len(places) {
		return places[i]
	}
	return sendqueue.Place{}
}

// failureMessage explains a Failed item's reason to people.
func failureMessage(reason string) string {
	for _, e := range []*bridge.Error{bridge.ErrNotOnWhatsApp, bridge.ErrLoggedOut, bridge.ErrEditWindowExpired} {
		if e.Code == reason {
			return e.Message
		}
	}
	return "every attempt failed; nothing was sent"
}
