package httpkit

import (
	"net/http"
	"strings"
	"time"

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
	// Keys are API_KEY and the scoped keys (*apikeys.Keys); nil: API_KEY
	// alone, with every scope.
	Keys Keys
}

// Keys tells who presented an API key (*apikeys.Keys): API_KEY, a scoped
// key, or nobody (bridge.ErrUnauthorized, also for an expired or revoked
// key); and counts a key's sends against its hourly budget.
type Keys interface {
	Authenticate(presented string) (bridge.Caller, error)
	Spend(c bridge.Caller, messages int) (time.Duration, error)
}

// KeyCheck is the one check of an API key, for every door (the JSON API,
// POST /send, the Cloud door, GET /api/events, MCP): who is calling, or
// the refusal, within the per-address limit on failed credentials (a
// locked address gets Retry-After on w). The door then puts the caller in
// the request's context (bridge.WithCaller) for the use cases, which
// check its scope and chats.
type KeyCheck func(w http.ResponseWriter, r *http.Request, presented string) (bridge.Caller, error)

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

// CheckAPIKey is the KeyCheck of every door.
func (c Credentials) CheckAPIKey(w http.ResponseWriter, r *http.Request, presented string) (bridge.Caller, error) {
	caller, err := c.identify(presented)
	if verr := c.Guard.Verdict(w, r, audit.ActionAPIKey, "API key", err == nil); verr != nil {
		return bridge.Caller{}, verr
	}
	return caller, nil
}

// identify is the caller whose key was presented: through Keys when set,
// else API_KEY alone.
func (c Credentials) identify(presented string) (bridge.Caller, error) {
	if c.Keys != nil {
		return c.Keys.Authenticate(presented)
	}
	if guard.Matches(presented, c.APIKey) {
		return bridge.Owner(), nil
	}
	return bridge.Caller{}, bridge.ErrUnauthorized
}

// TrustedHeader reports a request whose header carries a known API key or
// the admin token. Nothing is counted here: the handler checks it again.
func (c Credentials) TrustedHeader(r *http.Request) bool {
	return c.knownKey(r.Header.Get(contract.APIKeyHeader)) || c.knownKey(Bearer(r)) ||
		guard.Matches(r.Header.Get(contract.AdminTokenHeader), c.AdminToken)
}

func (c Credentials) knownKey(presented string) bool {
	if presented == "" {
		return false
	}
	_, err := c.identify(presented)
	return err == nil
}
