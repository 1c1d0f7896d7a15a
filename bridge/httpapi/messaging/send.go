package messaging

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
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
	// Space is that bound when another door writes into the spool too
	// (the Cloud door): one Space counts every door's writes. nil: one of
	// SpoolDir and SpoolMaxBytes.
	Space *spool.Space
}

// space is the bound of the spool the API writes into.
func (c SendConfig) space() *spool.Space {
	if c.Space != nil {
		return c.Space
	}
	return spool.NewSpace(c.SpoolDir, c.SpoolMaxBytes)
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
		err = answer(w)(s.sending().Submit(ctx, req))
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

// answer returns a function that writes the JSON door's answer to the use
// case's outcome, or returns its error for Handle to answer.
func answer(w http.ResponseWriter) func(sendqueue.Outcome, error) error {
	return func(o sendqueue.Outcome, err error) error {
		if err != nil {
			return err
		}
		status, body := renderSendResponse(o)
		httpkit.WriteBody(w, status, body)
		return nil
	}
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

// renderSendResponse is the JSON door's answer to an outcome (of POST
// /send, POST /api/messages or an action; first or repeated, through
// whichever door): every item's status, 202 when any item is Queued (it
// waits for the pace, a retry or a restriction), 422 when every item
// Failed at once (e.g. not_on_whatsapp: nothing will be sent), 200
// otherwise (every item was sent, or some sent and some failed; each item
// says which).
func renderSendResponse(o sendqueue.Outcome) (int, []byte) {
	out := SendResponseJSON{Messages: make([]sentItemJSON, len(o.Messages))}
	for i, m := range o.Messages {
		out.Messages[i] = sentItem(m)
	}
	code := http.StatusOK
	switch {
	case o.AnyQueued():
		code = http.StatusAccepted
	case o.AllFailed():
		code = http.StatusUnprocessableEntity
		reason := out.Messages[0].Reason
		out.Error = &httpkit.ErrorDetail{Code: reason, Message: failureMessage(reason)}
	}
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(out) // plain structs: cannot fail
	return code, buf.Bytes()
}

func sentItem(m sendqueue.OutcomeItem) sentItemJSON {
	item := sentItemJSON{ID: m.ID, WhatsAppID: m.WhatsAppID, Type: string(m.Type), Status: string(m.Status),
		RetryCount: m.RetryCount, Reason: m.Reason, QueuePosition: m.QueuePosition}
	if !m.ScheduledAt.IsZero() {
		item.ScheduledAt = bridge.FormatTime(m.ScheduledAt)
	}
	return item
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
