package mcp

import (
	"net/http"
	"strings"

	"github.com/msgbridge/msgbridge/contract"
)

// authorize admits a request to /mcp. It is the one place the door checks
// credentials: today the API key (API_KEY); a key's scope (mcp) plugs in
// here, through CheckKey, when keys carry scopes.
func (d *door) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := d.cfg.CheckKey(w, r, presentedKey(r)); err != nil {
			d.cfg.WriteError(w, err)
			return
		}
		next.ServeHTTP(w, r)
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
