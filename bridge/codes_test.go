package bridge_test

import (
	"regexp"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// The table of error codes names each code once, in the wire's form, with
// a kind a transport knows and a meaning for people.
func TestCodesTable(t *testing.T) {
	wire := regexp.MustCompile(`^[a-z]+(_[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, c := range bridge.Codes {
		switch {
		case !wire.MatchString(c.Code):
			t.Errorf("%q is not a wire code (lowercase words joined by _)", c.Code)
		case seen[c.Code]:
			t.Errorf("%q is in the table twice", c.Code)
		case c.Kind < bridge.KindInternal || c.Kind > bridge.KindForbidden:
			t.Errorf("%q has kind %d, which no transport answers", c.Code, c.Kind)
		case c.Meaning == "" || c.Meaning == "(no meaning written yet)":
			t.Errorf("%q has no meaning; write one in codes.go", c.Code)
		}
		seen[c.Code] = true
	}
}
