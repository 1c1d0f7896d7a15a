package messaging

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/groupadmin"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// GroupAdmin administers groups through the session (*whatsapp.Session).
// Every method but CachedGroupInfo is one query to WhatsApp, answered at
// once.
type GroupAdmin interface {
	GroupInfo(ctx context.Context, group bridge.Recipient) (bridge.GroupInfo, error)
	// CachedGroupInfo is what GroupInfo answered lately, when the group
	// has not changed since; false: ask GroupInfo.
	CachedGroupInfo(group bridge.Recipient) (bridge.GroupInfo, bool)
	CreateGroup(ctx context.Context, subject string, participants []bridge.Recipient) (bridge.GroupInfo, []bridge.MemberResult, error)
	SetGroupSubject(ctx context.Context, group bridge.Recipient, subject string) error
	SetGroupDescription(ctx context.Context, group bridge.Recipient, description string) error
	SetGroupPhoto(ctx context.Context, group bridge.Recipient, jpeg []byte) (string, error)
	ChangeMembers(ctx context.Context, group bridge.Recipient, action bridge.MemberAction, participants []bridge.Recipient) ([]bridge.MemberResult, error)
	InviteLink(ctx context.Context, group bridge.Recipient, reset bool) (string, error)
	JoinGroup(ctx context.Context, code string) (bridge.Recipient, error)
	LeaveGroup(ctx context.Context, group bridge.Recipient) error
}

// maxGroupPhoto bounds a group photo: WhatsApp shows 640x640 JPEGs, far
// below a megabyte.
const maxGroupPhoto = 1 << 20

// groupAction is one administrative request: its audit action and detail,
// its cost in the pace, and what it does (its status and answer body).
type groupAction struct {
	audit  audit.Action
	detail string
	cost   int
	run    func(ctx context.Context) (int, any, error)
}

// doGroupAction carries out a through the group administration use case
// (pacing, and the Idempotency-Key's first answer for a repeat), audits
// what reached WhatsApp and writes the answer.
func (s *server) doGroupAction(w http.ResponseWriter, r *http.Request, raw []byte, a groupAction) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	answer, err := s.Groups.Actions.Do(r.Context(), groupadmin.Action{Key: key, Hash: requestHash(r, raw), Cost: a.cost,
		Run:     func(ctx context.Context) (sendqueue.Answer, error) { return s.runGroupAction(ctx, r, a) },
		Refused: refusedAnswer})
	if err != nil {
		return withRetryAfter(w, err)
	}
	writeAnswer(w, answer.Status, answer.Body)
	return nil
}

// withRetryAfter returns err, having set the Retry-After header of a
// paced refusal.
func withRetryAfter(w http.ResponseWriter, err error) error {
	if wait, ok := bridge.RetryAfterOf(err); ok {
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
	}
	return err
}

// writeAnswer writes a JSON answer, or only the status when it has no body.
// The body is the bridge's own JSON encoding (encodeJSON), fresh or kept
// under an Idempotency-Key, never bytes a caller sent.
func writeAnswer(w http.ResponseWriter, status int, body []byte) {
	if len(body) == 0 {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body) //nolint:gosec // G705: JSON the bridge encoded (see above), served as application/json with nosniff
}

// runGroupAction asks WhatsApp and audits a; its answer as JSON.
func (s *server) runGroupAction(ctx context.Context, r *http.Request, a groupAction) (sendqueue.Answer, error) {
	status, v, err := a.run(ctx)
	if err != nil {
		err = httpkit.SessionError(err)
	}
	s.Audit.Record(r, a.audit, httpkit.OutcomeOfError(err), a.detail)
	if err != nil {
		return sendqueue.Answer{}, err
	}
	if v == nil {
		return sendqueue.Answer{Status: status}, nil
	}
	return sendqueue.Answer{Status: status, Body: encodeJSON(v)}, nil
}

// refusedAnswer is the answer to WhatsApp's refusal of an action, as
// Handle would write it, kept for the repeats of its key.
func refusedAnswer(err error) sendqueue.Answer {
	e := bridge.ErrorOf(err)
	return sendqueue.Answer{Status: httpkit.StatusOf(e), Body: encodeJSON(httpkit.ErrorBody{Error: httpkit.ErrorDetail{Code: e.Code, Message: e.Message}})}
}

// encodeJSON is v as writeJSON writes it, so that a stored answer and a
// written one are the same bytes.
func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(v) // plain structs and maps: cannot fail
	return buf.Bytes()
}

// requestHash identifies a group request: method, path and body.
func requestHash(r *http.Request, raw []byte) string {
	h := sha256.New()
	h.Write([]byte(r.Method + " " + r.URL.Path + "\n"))
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil))
}

// readGroupJSON reads a JSON body into v and returns it raw (for the
// Idempotency-Key's request hash).
func readGroupJSON(w http.ResponseWriter, r *http.Request, v any) ([]byte, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, httpkit.MaxJSONBody))
	if err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return nil, bridge.Errorf(bridge.KindTooLarge, bridge.CodeBodyTooLarge, "the body must be at most %d bytes", httpkit.MaxJSONBody)
		}
		return nil, bridge.Invalid(bridge.CodeInvalidJSON, "the body could not be read")
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return raw, httpkit.DecodeJSON(w, r, v)
}

// parseGroup reads the {jid} of a group path: <id>@g.us.
func parseGroup(r *http.Request) (bridge.Recipient, error) {
	g, err := bridge.ParseRecipient(mux.Vars(r)["jid"])
	if err != nil || g.Kind != bridge.RecipientGroup {
		return bridge.Recipient{}, bridge.Invalid(bridge.CodeInvalidGroup, "the path must name a group: <id>@g.us")
	}
	return g, nil
}
