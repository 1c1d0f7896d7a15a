package httpkit

import (
	"net/http"
	"strings"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/contract"
)

// Credentials is the one credential check every audience uses: the API
// key of the messaging API (and the Cloud door), the admin token of the
// admin API and the profiles, both within the per-address limit on failed
// credentials that Guard keeps.
type Credentials struct {
	APIKey     bridge.Secret
	AdminToken bridge.Secret
	Guard      *guard.Credentials
}

// KeyCheck checks a presented API key for request r, as every API
// request's is checked; a locked address gets Retry-After on w.
type KeyCheck func(w http.ResponseWriter, r *http.Request, presented string) error

// PresentedAPIKey is the API key a request carries: the X-Api-Key header,
// else the apiKey query parameter (POST /send reads the form's apiKey field
// itself, as it comes).
func PresentedAPIKey(r *http.Request) string {
	if k := r.Header.Get(contract.APIKeyHeader); k != "" {
		return k
	}
	if k := r.URL.Query().Get("apiKey"); k != "" {
		return k
	}
	return ""
}

// Bearer is the token of an Authorization: Bearer header (the Cloud API
// door's credential); "" when none.
func Bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// CheckAdminToken checks the request's X-Admin-Token header.
func (c Credentials) CheckAdminToken(w http.ResponseWriter, r *http.Request) error {
	return c.Guard.Check(w, r, audit.ActionAdminToken, "admin token", r.Header.Get(contract.AdminTokenHeader), c.AdminToken)
}

// CheckAPIKey checks a presented API key within the per-address limit.
func (c Credentials) CheckAPIKey(w http.ResponseWriter, r *http.Request, presented string) error {
	return c.Guard.Check(w, r, audit.ActionAPIKey, "API key", presented, c.APIKey)
}

// RequireAPIKey admits requests carrying the API key in the header or the
// query (reads have no body).
func (c Credentials) RequireAPIKey(next HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := c.CheckAPIKey(w, r, PresentedAPIKey(r)); err != nil {
			return err
		}
		return next(w, r)
	}
}

// TrustedHeader reports a request whose header carries the API key or the
// admin token. Nothing is counted here: the handler checks it again.
func (c Credentials) TrustedHeader(r *http.Request) bool {
	return guard.Matches(r.Header.Get(contract.APIKeyHeader), c.APIKey) ||
		guard.Matches(Bearer(r), c.APIKey) ||
		guard.Matches(r.Header.Get(contract.AdminTokenHeader), c.AdminToken)
}
