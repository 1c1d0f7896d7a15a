package httpapi

import (
	"net/http"

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

// checkAPIKey checks a presented API key within the per-address limit.
func (s *server) checkAPIKey(w http.ResponseWriter, r *http.Request, presented string) error {
	return s.Guard.Check(w, r, audit.ActionAPIKey, "API key", presented, s.Send.APIKey)
}

// requireAPIKey admits requests carrying the API key in the header or the
// query (reads have no body).
func (s *server) requireAPIKey(next HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := s.checkAPIKey(w, r, presentedAPIKey(r)); err != nil {
			return err
		}
		return next(w, r)
	}
}
