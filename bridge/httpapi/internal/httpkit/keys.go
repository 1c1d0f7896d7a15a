package httpkit

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
)

// RequireAPIKey admits requests carrying an API key in the header or the
// query (reads have no body) with the scope the method needs (read for
// GET and HEAD, send for the rest), whose chat, when the route names one,
// is in the key's allowlist; the handler runs with the caller in its
// context, and a named key's every use is audited under its name.
func (c Common) RequireAPIKey(next HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		caller, err := c.Credentials.CheckAPIKey(w, r, PresentedAPIKey(r))
		if err != nil {
			return err
		}
		r = r.WithContext(bridge.WithCaller(r.Context(), caller))
		err = caller.Require(ScopeOf(r.Method))
		if err == nil {
			err = routeChatAllowed(r, caller)
		}
		if err == nil {
			err = next(w, r)
		}
		c.AuditKeyUse(r, caller, err)
		return err
	}
}

// ScopeOf is the scope a request of method needs: read for GET and HEAD,
// send (or change) for the rest.
func ScopeOf(method string) bridge.Scope {
	if method == http.MethodGet || method == http.MethodHead {
		return bridge.ScopeRead
	}
	return bridge.ScopeSend
}

// AuditKeyUse records a named key's request under its name with its
// outcome. API_KEY's are not recorded: it is the owner's, used by the
// backends at their pace, and was never audited per request.
func (c Common) AuditKeyUse(r *http.Request, caller bridge.Caller, err error) {
	if caller.Name == bridge.OwnerName || caller.Name == "" {
		return
	}
	detail := "key " + caller.Name + ": " + r.Method + " " + bridge.Truncate(r.URL.Path, 200)
	if err != nil {
		detail += " (" + bridge.ErrorOf(err).Code + ")"
	}
	c.Audit.Record(r, audit.ActionKeyUse, OutcomeOfError(err), detail)
}

// routeChatAllowed refuses a key with an allowlist a route that names a
// chat outside it ({jid}: a chat or group; {number}: a contact), or a
// group route that names none (create, join: a new chat).
func routeChatAllowed(r *http.Request, caller bridge.Caller) error {
	if caller.AllChats() {
		return nil
	}
	vars := mux.Vars(r)
	for _, name := range []string{"jid", "number"} {
		if v, ok := vars[name]; ok {
			// A malformed chat is no chat of the allowlist: the zero
			// Recipient is refused like any other outside it.
			chat, _ := bridge.ParseRecipient(v)
			return caller.RequireChat(chat)
		}
	}
	if p := r.URL.Path; p == "/api/groups" || p == "/api/groups/join" {
		return caller.RequireChat(bridge.Recipient{})
	}
	return nil
}
