package httpapi

import (
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/contract"
)

// presentedAPIKey is the API key a request carries: the X-Api-Key header,
// else the apiKey query parameter (POST /send reads the form's apiKey field
// itself, as it comes).
func presentedAPIKey(r *http.Request) string {
	if k := r.Header.Get(contract.APIKeyHeader); k != "" {
		return k
	}
	if k := r.URL.Query().Get("apiKey"); k != "" {
		return k
	}
	return ""
}

// requireAdmin admits requests whose X-Admin-Token header is the admin token,
// within the per-address limit on failed credentials.
func (s *server) requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.checkAdminToken(w, r); err != nil {
			WriteError(w, s.Log, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *server) checkAdminToken(w http.ResponseWriter, r *http.Request) error {
	return s.Guard.Check(w, r, audit.ActionAdminToken, "admin token", r.Header.Get(contract.AdminTokenHeader), s.AdminToken)
}

// requireAPIKey admits requests carrying an API key with scope in the
// header or the query (reads have no body), whose chat, when the route
// names one, is in the key's allowlist; the handler runs with the caller
// in its context, and a named key's every use is audited.
func (s *server) requireAPIKey(scope bridge.Scope, next HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.checkAPIKey(w, r, presentedAPIKey(r))
		if err != nil {
			return err
		}
		r = r.WithContext(bridge.WithCaller(r.Context(), c))
		err = c.Require(scope)
		if err == nil {
			err = routeChatAllowed(r, c)
		}
		if err == nil {
			err = next(w, r)
		}
		s.auditKeyUse(r, c, err)
		return err
	}
}
