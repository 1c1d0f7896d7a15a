package httpapi

import (
	"net/http"
	"strings"

	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/contract"
)

// DefaultServerLimits are guard's body limits for attachments of at most
// maxFile bytes: the largest body POST /send takes is maxItems files.
func DefaultServerLimits(maxFile int64) guard.Limits {
	return guard.DefaultLimits(maxItems*(maxFile+64<<10) + maxFieldBytes)
}

// limitBodies applies s.Limits to every request body before routing.
func (s *server) limitBodies(next http.Handler) http.Handler {
	return guard.Bodies(s.Limits, s.trustedHeader, func(w http.ResponseWriter, err error) { WriteError(w, s.Log, err) }, next)
}

// bearer is the token of an Authorization: Bearer header (the Cloud API
// door's credential); "" when none.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// trustedHeader reports a request whose header carries the API key or the
// admin token. Nothing is counted here: the handler checks it again.
func (s *server) trustedHeader(r *http.Request) bool {
	return s.knownKey(r.Header.Get(contract.APIKeyHeader)) || s.knownKey(bearer(r)) ||
		guard.Matches(r.Header.Get(contract.AdminTokenHeader), s.AdminToken)
}

// knownKey reports a presented API key that names a caller (API_KEY or a
// live scoped key).
func (s *server) knownKey(presented string) bool {
	if presented == "" {
		return false
	}
	_, err := s.identify(presented)
	return err == nil
}
