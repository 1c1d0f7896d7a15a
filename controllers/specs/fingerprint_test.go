package specs

import (
	"strings"
	"testing"
)

func TestKeyFingerprint(t *testing.T) {
	a, b := []byte(strings.Repeat("ab", 32)), []byte(strings.Repeat("cd", 32))
	fa := KeyFingerprint(a)
	if len(fa) != 32 || strings.Contains(fa, "abab") {
		t.Errorf("fingerprint %q: want 32 hex characters unlike the key", fa)
	}
	if KeyFingerprint([]byte(strings.Repeat("AB", 32))) != fa {
		t.Error("the bridge reads hex case-insensitively; so must the fingerprint")
	}
	if KeyFingerprint(b) == fa {
		t.Error("two keys, one fingerprint")
	}
}
