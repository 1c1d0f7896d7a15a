package webhook

import (
	"strings"
	"testing"
)

// A subscription id is 1 to 63 lower-case letters, digits and dashes,
// starting with a letter or digit: the length is checked apart from the
// pattern, on both sides of its bound.
func TestValidIDBounds(t *testing.T) {
	for id, ok := range map[string]bool{
		"crm": true, "0-a": true, strings.Repeat("a", 63): true,
		"": false, strings.Repeat("a", 64): false, "-crm": false, "Crm": false, "c_rm": false, "crm\n": false,
	} {
		if err := ValidID(id); (err == nil) != ok {
			t.Errorf("ValidID(%q) = %v, want ok %v", id, err, ok)
		}
	}
}
