package guard

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestClientAddress(t *testing.T) {
	for remote, want := range map[string]string{"10.1.2.3:5555": "10.1.2.3", "[fd00::1]:80": "fd00::1", "pipe": "pipe"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", "203.0.113.9")
		if got := ClientAddress(r); got != want {
			t.Errorf("ClientAddress(%q) = %q, want %q", remote, got, want)
		}
	}
}
