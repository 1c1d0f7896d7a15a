package mcp

import (
	"net/http"
	"strings"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// authorize admits a request to /mcp. It is the one place the door checks
// credentials: a key with the mcp scope (API_KEY has every scope), whose
// caller then travels with the request (callerHeader, and the context) to
// the use cases, which apply its chats, its other scopes (send), its budget
// and its approval.
func (d *door) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(callerHeader)
		caller, err := d.cfg.CheckKey(w, r, presentedKey(r))
		if err == nil {
			err = caller.Require(bridge.ScopeMCP)
		}
		if err != nil {
			d.cfg.WriteError(w, err)
			return
		}
		ref := d.callers.put(caller)
		defer d.callers.drop(ref)
		r.Header.Set(callerHeader, ref)
		next.ServeHTTP(w, r.WithContext(bridge.WithCaller(r.Context(), caller)))
	})
}

// presentedKey is the credential a request carries: the X-Api-Key header,
// as on every door, or a bearer token, which is what MCP clients are
// configured to send.
func presentedKey(r *http.Request) string {
	if k := r.Header.Get(contract.APIKeyHeader); k != "" {
		return k
	}
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(token)
	}
	return ""
}
