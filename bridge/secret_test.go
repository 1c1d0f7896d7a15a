package bridge_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
)

// A Secret, alone or inside a struct, never shows in fmt's verbs nor in a
// logr sink's view of it; Reveal gives it back.
func TestSecretIsRedacted(t *testing.T) {
	const value = "s3cr3t-0123456789"
	s := bridge.Secret(value)
	holder := struct {
		Name  string
		Token bridge.Secret
	}{"x", s}
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		for _, v := range []any{s, holder, &holder} {
			if out := fmt.Sprintf(format, v); strings.Contains(out, value) {
				t.Errorf("%s of %T leaks the secret: %s", format, v, out)
			}
		}
	}
	var m logr.Marshaler = s
	if got := fmt.Sprint(m.MarshalLog()); got != "[redacted]" {
		t.Errorf("MarshalLog = %q", got)
	}
	if s.Reveal() != value {
		t.Errorf("Reveal = %q", s.Reveal())
	}
}
