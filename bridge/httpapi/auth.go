package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// credentialMatches compares a presented credential with the expected one in
// constant time. Hashing both first makes the comparison independent of the
// lengths too, which ConstantTimeCompare alone would reveal.
func credentialMatches(presented string, want bridge.Secret) bool {
	if want == "" {
		return false // an unset credential admits nobody
	}
	p := sha256.Sum256([]byte(presented))
	w := sha256.Sum256([]byte(want.Reveal()))
	return subtle.ConstantTimeCompare(p[:], w[:]) == 1
}

// unauthorized answers 401 with one body whether the credential was missing
// or wrong, so the answer tells a prober nothing.
func unauthorized(w http.ResponseWriter) {
	writeError(w, http.StatusUnauthorized, "unauthorized", "missing or invalid credential")
}

// requireAdmin admits requests whose X-Admin-Token header is the admin token.
func requireAdmin(token bridge.Secret, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !credentialMatches(r.Header.Get(contract.AdminTokenHeader), token) {
			unauthorized(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}
