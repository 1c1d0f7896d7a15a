package dashboard

import (
	"testing"
	"time"
)

// rfcKey is the SHA-1 key of RFC 6238 appendix B.
var rfcKey = []byte("12345678901234567890")

// RFC 6238 appendix B, SHA-1 rows, last six digits (the vectors have
// eight; a six-digit code is the same number mod 10^6).
func TestTOTPCodeMatchesRFC6238Vectors(t *testing.T) {
	v := newTOTPVerifier(rfcKey)
	for _, c := range []struct {
		unix int64
		want string
	}{
		{59, "287082"},
		{1111111109, "081804"},
		{1111111111, "050471"},
		{1234567890, "005924"},
		{2000000000, "279037"},
		{20000000000, "353130"},
	} {
		if got := v.code(uint64(c.unix / 30)); got != c.want {
			t.Errorf("T=%d: %s, want %s", c.unix, got, c.want)
		}
	}
}

func TestTOTPVerifierToleranceAndReplay(t *testing.T) {
	now := time.Unix(1234567890, 0)
	step := uint64(now.Unix() / 30)
	v := newTOTPVerifier(rfcKey)
	for _, c := range []struct {
		what string
		code string
		want bool
	}{
		{"a wrong code", "000000", false},
		{"the previous step's code", v.code(step - 1), true},
		{"the same code again", v.code(step - 1), false},
		{"the current code after an older one", v.code(step), true},
		{"an older step after a newer one", v.code(step - 1), false},
		{"a code two steps ahead", v.code(step + 2), false},
		{"the next step's code", v.code(step + 1), true},
		{"too short", v.code(step)[:5], false},
	} {
		if got := v.verify(c.code, now); got != c.want {
			t.Errorf("%s (%s): accepted=%v, want %v", c.what, c.code, got, c.want)
		}
	}
	if newTOTPVerifier(nil).verify(v.code(step), now) {
		t.Error("accepted without a key")
	}
}

// Whatever code a form carries, at whatever time: the verifier accepts it
// only when it is the code of the step or one either side, and never twice;
// without a key it accepts nothing.
func FuzzTOTPVerify(f *testing.F) {
	for _, s := range []string{"", "000000", "12345", "1234567", "٠٠٠٠٠٠", "005924"} {
		f.Add(s, int64(1234567890))
	}
	f.Fuzz(func(t *testing.T, code string, unix int64) {
		if unix < 60 || unix > 1<<40 {
			return // before the second step, or beyond any clock
		}
		now := time.Unix(unix, 0)
		v := newTOTPVerifier(rfcKey)
		step := uint64(unix / 30)
		valid := code == v.code(step-1) || code == v.code(step) || code == v.code(step+1)
		if got := v.verify(code, now); got != valid {
			t.Fatalf("verify(%q) at %d = %v, want %v", code, unix, got, valid)
		}
		if v.verify(code, now) {
			t.Fatalf("%q accepted twice", code)
		}
		if newTOTPVerifier(nil).verify(code, now) {
			t.Fatalf("accepted %q without a key", code)
		}
	})
}
