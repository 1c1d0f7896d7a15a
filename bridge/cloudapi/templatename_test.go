package cloudapi

import (
	"strings"
	"testing"
)

// A template name is Graph's 1-512 lower-case letters, digits and
// underscores: the length is checked apart from the pattern, on both sides
// of its bound.
func TestTemplateNameBounds(t *testing.T) {
	for name, ok := range map[string]bool{
		"order_update": true, "a1": true, strings.Repeat("a", 512): true,
		"": false, strings.Repeat("a", 513): false, "Order": false, "order-update": false, "order\n": false,
	} {
		if got := validTemplateName(name); got != ok {
			t.Errorf("validTemplateName(%q) = %v, want %v", name, got, ok)
		}
	}
}
