package guard

import (
	"crypto/sha256"
	"crypto/subtle"

	"github.com/msgbridge/msgbridge/bridge"
)

// Matches compares a presented credential with the expected one in
// constant time: the API key, the admin token and the dashboard's sign-in
// all use it. Hashing both first makes the comparison independent of the
// lengths too, which ConstantTimeCompare alone would reveal. An unset
// credential admits nobody.
func Matches(presented string, want bridge.Secret) bool {
	if want == "" {
		return false
	}
	p := sha256.Sum256([]byte(presented))
	w := sha256.Sum256([]byte(want.Reveal()))
	return subtle.ConstantTimeCompare(p[:], w[:]) == 1
}
