package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/apikeys"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/guard"
)

// Keys are the API keys (*apikeys.Keys). Authenticate tells who presented
// one: API_KEY, a scoped key, or nobody (bridge.ErrUnauthorized, also for
// an expired or revoked key); Spend counts a key's sends against its
// hourly budget; the rest manage them under /api/admin/keys.
type Keys interface {
	Authenticate(presented string) (bridge.Caller, error)
	Spend(c bridge.Caller, messages int) (time.Duration, error)
	Create(ctx context.Context, r apikeys.Request) (apikeys.Key, bridge.Secret, error)
	Put(ctx context.Context, r apikeys.Request, secret bridge.Secret) (apikeys.Key, error)
	List(ctx context.Context) ([]apikeys.Key, error)
	Revoke(ctx context.Context, name string) error
}

// KeyCheck is the one check of an API key, for every door (the JSON API,
// POST /send, the Cloud door, GET /api/events, MCP): who is calling, or
// the refusal, within the per-address limit on failed credentials (a
// locked address gets Retry-After on w). The door then puts the caller in
// the request's context (bridge.WithCaller) for the use cases, which
// check its scope and chats.
type KeyCheck func(w http.ResponseWriter, r *http.Request, presented string) (bridge.Caller, error)

// checkAPIKey is the API's KeyCheck.
func (s *server) checkAPIKey(w http.ResponseWriter, r *http.Request, presented string) (bridge.Caller, error) {
	c, err := s.identify(presented)
	if verr := s.Guard.Verdict(w, r, audit.ActionAPIKey, "API key", err == nil); verr != nil {
		return bridge.Caller{}, verr
	}
	return c, nil
}

// identify is the caller whose key was presented: through Keys when set,
// else API_KEY alone.
func (s *server) identify(presented string) (bridge.Caller, error) {
	if s.Keys != nil {
		return s.Keys.Authenticate(presented)
	}
	if guard.Matches(presented, s.Send.APIKey) {
		return bridge.Owner(), nil
	}
	return bridge.Caller{}, bridge.ErrUnauthorized
}

// auditKeyUse records a named key's request under its name with its
// outcome. API_KEY's are not recorded: it is the owner's, used by the
// backends at their pace, and was never audited per request.
func (s *server) auditKeyUse(r *http.Request, c bridge.Caller, err error) {
	if c.Name == bridge.OwnerName || c.Name == "" {
		return
	}
	detail := "key " + c.Name + ": " + r.Method + " " + bridge.Truncate(r.URL.Path, 200)
	if err != nil {
		detail += " (" + bridge.ErrorOf(err).Code + ")"
	}
	s.Audit.Record(r, audit.ActionKeyUse, OutcomeOfError(err), detail)
}

// routeChatAllowed refuses a key with an allowlist a route that names a
// chat outside it ({jid}: a chat or group; {number}: a contact), or a
// group route that names none (create, join: a new chat).
func routeChatAllowed(r *http.Request, c bridge.Caller) error {
	if c.AllChats() {
		return nil
	}
	vars := mux.Vars(r)
	for _, name := range []string{"jid", "number"} {
		if v, ok := vars[name]; ok {
			// A malformed chat is no chat of the allowlist: the zero
			// Recipient is refused like any other outside it.
			chat, _ := bridge.ParseRecipient(v)
			return c.RequireChat(chat)
		}
	}
	if p := r.URL.Path; p == "/api/groups" || p == "/api/groups/join" {
		return c.RequireChat(bridge.Recipient{})
	}
	return nil
}

// listableChat is the chat a key with an allowlist may list: the one the
// query names, which must be in the allowlist; a list of every chat is
// refused.
func listableChat(c bridge.Caller, chat bridge.Recipient) error {
	if c.AllChats() {
		return nil
	}
	if chat.IsZero() {
		return bridge.Errorf(bridge.KindForbidden, bridge.CodeChatNotAllowed,
			"the key %q may read some chats only: name one with chat=", c.Name)
	}
	return c.RequireChat(chat)
}
