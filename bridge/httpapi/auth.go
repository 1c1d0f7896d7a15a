package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// CredentialMatches compares a presented credential with the expected one in
// constant time: the API key, the admin token and the dashboard's sign-in
// all use it. Hashing both first makes the comparison independent of the
// lengths too, which ConstantTimeCompare alone would reveal. An unset
// credential admits nobody.
func CredentialMatches(presented string, want bridge.Secret) bool {
	if want == "" {
		return false
	}
	p := sha256.Sum256([]byte(presented))
	w := sha256.Sum256([]byte(want.Reveal()))
	return subtle.ConstantTimeCompare(p[:], w[:]) == 1
}

// checkCredential is nil when presented is want, else bridge.ErrUnauthorized:
// one answer whether the credential was missing or wrong, so that it tells
// a prober nothing.
func checkCredential(presented string, want bridge.Secret) error {
	if !CredentialMatches(presented, want) {
		return bridge.ErrUnauthorized
	}
	return nil
}

// presentedAPIKey is the API key a request carries: the X-Api-Key header,
// else the apiKey query parameter, else the apiKey field of the form read
// from its body (POST /send; nil before the body is read, or without one).
func presentedAPIKey(r *http.Request, form *sendForm) string {
	if k := r.Header.Get(contract.APIKeyHeader); k != "" {
		return k
	}
	if k := r.URL.Query().Get("apiKey"); k != "" {
		return k
	}
	if form != nil {
		return form.apiKey
	}
	return ""
}

// requireAdmin admits requests whose X-Admin-Token header is the admin token.
func (s *server) requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkCredential(r.Header.Get(contract.AdminTokenHeader), s.AdminToken); err != nil {
			WriteError(w, s.Log, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireAPIKey admits requests carrying the API key in the header or the
// query (reads have no body).
func (s *server) requireAPIKey(next HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := checkCredential(presentedAPIKey(r, nil), s.Send.APIKey); err != nil {
			return err
		}
		return next(w, r)
	}
}
