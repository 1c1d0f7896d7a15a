package messaging

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
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

// GroupAnswers keeps group actions' answers under their Idempotency-Key
// (*sendqueue.Answers).
type GroupAnswers interface {
	Claim(ctx context.Context, key, reqHash string) (*sendqueue.StoredResponse, error)
	Keep(ctx context.Context, key string, res sendqueue.StoredResponse) error
	Release(ctx context.Context, key string) error
}

// maxGroupPhoto bounds a group photo: WhatsApp shows 640x640 JPEGs, far
// below a megabyte.
const maxGroupPhoto = 1 << 20

// maxGroupPaceWait is how long a request waits for its turn in the group
// actions' pace before it is refused with a Retry-After instead.
const maxGroupPaceWait = 30 * time.Second

// groupPace spaces group actions (GROUP_ACTION_RATE): WhatsApp bans
// accounts that add many people quickly, so an action costs a token per
// participant it names, a burst of bridge.GroupActionBurst at most, and an
// action that waits for its turn waits a random part of an interval more,
// so that no two gaps look alike.
type groupPace struct {
	budget   *bridge.Budget
	interval time.Duration
	now      func() time.Time
	random   func() float64
	sleep    func(ctx context.Context, d time.Duration) error
}

func newGroupPace(rate bridge.SendRate, now func() time.Time) *groupPace {
	return &groupPace{budget: bridge.NewBudget(rate, bridge.GroupActionBurst), interval: rate.Interval(), now: now,
		random: rand.Float64, sleep: sleepCtx}
}

// sleepCtx waits d, or less when ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// admit waits for an action of cost tokens, or refuses it (429,
// group_action_rate_limited) when its turn is over maxGroupPaceWait away.
func (p *groupPace) admit(ctx context.Context, cost int) error {
	wait, ok := p.budget.ReserveN(p.now(), max(cost, 1), maxGroupPaceWait)
	if !ok {
		return &bridge.Error{Kind: bridge.KindRateLimited, Code: bridge.CodeGroupActionRateLimited,
			Message: "group actions are paced (GROUP_ACTION_RATE) to keep WhatsApp from banning the account; retry after the Retry-After seconds",
			Err:     bridge.RetryAfter(wait)}
	}
	if wait == 0 {
		return nil
	}
	return p.sleep(ctx, wait+time.Duration(float64(p.interval)*groupJitter*p.random()))
}

// groupJitter stretches a wait for the pace by a random part of up to half
// an interval, as the send queue's pace does.
const groupJitter = 0.5

// keyLocks runs one request per Idempotency-Key at a time in this process.
type keyLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

func (k *keyLocks) try(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held == nil {
		k.held = map[string]bool{}
	}
	if k.held[key] {
		return false
	}
	k.held[key] = true
	return true
}

func (k *keyLocks) release(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.held, key)
}

// groupAction is one administrative request: its audit action and detail,
// its cost in the pace, and what it does (its status and answer body).
type groupAction struct {
	audit  audit.Action
	detail string
	cost   int
	run    func(ctx context.Context) (int, any, error)
}

// doGroupAction carries out a: an Idempotency-Key repeat answers as its
// first request did, the pace admits it, WhatsApp is asked, the outcome is
// audited. An answer that WhatsApp gave (a success or its refusal) is kept
// under the key; a request that never reached it frees the key.
func (s *server) doGroupAction(w http.ResponseWriter, r *http.Request, raw []byte, a groupAction) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	if key != "" {
		if !s.groupKeys.try(key) {
			return bridge.Errorf(bridge.KindConflict, bridge.CodeIdempotencyKeyInFlight,
				"a request with this Idempotency-Key is being carried out; repeat it once that one answered")
		}
		defer s.groupKeys.release(key)
		stored, err := s.Groups.Answers.Claim(r.Context(), key, requestHash(r, raw))
		if err != nil {
			return err
		}
		if stored != nil {
			writeAnswer(w, stored.Status, stored.Body)
			return nil
		}
	}
	status, body, err := s.runGroupAction(r, a)
	if key != "" {
		s.settleKey(r, key, status, body, err)
	}
	if err != nil {
		return withRetryAfter(w, err)
	}
	writeAnswer(w, status, body)
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

// runGroupAction paces, runs and audits a; its answer as JSON.
func (s *server) runGroupAction(r *http.Request, a groupAction) (int, []byte, error) {
	if err := s.groupPace.admit(r.Context(), a.cost); err != nil {
		return 0, nil, err
	}
	status, v, err := a.run(r.Context())
	if err != nil {
		err = httpkit.SessionError(err)
	}
	s.Audit.Record(r, a.audit, httpkit.OutcomeOfError(err), a.detail)
	if err != nil {
		return 0, nil, err
	}
	if v == nil {
		return status, nil, nil
	}
	return status, encodeJSON(v), nil
}

// encodeJSON is v as writeJSON writes it, so that a stored answer and a
// written one are the same bytes.
func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(v) // plain structs and maps: cannot fail
	return buf.Bytes()
}

// settleKey keeps the answer under key, or frees key when the action
// never reached WhatsApp (paced, not linked, a fault of the bridge).
func (s *server) settleKey(r *http.Request, key string, status int, body []byte, err error) {
	ctx := context.WithoutCancel(r.Context())
	if err != nil {
		switch bridge.ErrorKind(err) {
		case bridge.KindRateLimited, bridge.KindUnavailable, bridge.KindTimeout, bridge.KindInternal:
			if err := s.Groups.Answers.Release(ctx, key); err != nil {
				s.Log.Error(err, "free idempotency key")
			}
			return
		default:
		}
		e := bridge.ErrorOf(err)
		status = httpkit.StatusOf(e)
		body = encodeJSON(httpkit.ErrorBody{Error: httpkit.ErrorDetail{Code: e.Code, Message: e.Message}})
	}
	if err := s.Groups.Answers.Keep(ctx, key, sendqueue.StoredResponse{Status: status, Body: body}); err != nil {
		s.Log.Error(err, "store idempotent response")
	}
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
