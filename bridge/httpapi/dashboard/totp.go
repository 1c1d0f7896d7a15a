package dashboard

import (
	"crypto/subtle"
	"encoding/base32"
	"sync"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
)

// TOTP parameters: RFC 6238's defaults, which authenticator apps use.
const (
	totpStep   = 30 * time.Second
	totpDigits = otp.DigitsSix
)

// totpVerifier accepts the code of the current step or one step either side
// (clock drift), and never the same or an earlier step twice: a code seen
// over a shoulder or in a log cannot be used again. pquerna/otp computes
// the codes; it has no memory of used steps, which is what this type adds.
type totpVerifier struct {
	secret string // base32, as pquerna/otp takes it; empty: no TOTP

	mu       sync.Mutex
	lastStep uint64 // the last accepted time step; 0 = none yet
}

func newTOTPVerifier(key []byte) *totpVerifier {
	if len(key) == 0 {
		return &totpVerifier{}
	}
	return &totpVerifier{secret: base32.StdEncoding.EncodeToString(key)}
}

// code is the code of time step counter.
func (v *totpVerifier) code(counter uint64) string {
	c, err := hotp.GenerateCodeCustom(v.secret, counter, hotp.ValidateOpts{Digits: totpDigits, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return "" // the secret is valid base32 by construction; "" matches no code
	}
	return c
}

// verify reports whether code is valid at now, and consumes its step.
func (v *totpVerifier) verify(code string, now time.Time) bool {
	if v.secret == "" || len(code) != totpDigits.Length() {
		return false
	}
	step := uint64(now.Unix()) / uint64(totpStep/time.Second)
	v.mu.Lock()
	defer v.mu.Unlock()
	matched := uint64(0)
	// Every candidate is computed and compared, so the timing does not tell
	// which step matched.
	for _, s := range []uint64{step - 1, step, step + 1} {
		if subtle.ConstantTimeCompare([]byte(v.code(s)), []byte(code)) == 1 {
			matched = s
		}
	}
	if matched == 0 || matched <= v.lastStep {
		return false
	}
	v.lastStep = matched
	return true
}
