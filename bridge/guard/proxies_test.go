package guard

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Item 4: X-Forwarded-For is believed from the trusted proxies only, read
// from the right past the proxies.
func TestForwarded(t *testing.T) {
	trusted, err := ParseProxies(" 10.0.0.0/8, fd00::/8,192.0.2.7 ")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, remote, xff, want string
	}{
		{"no proxy trusted for a stranger", "203.0.113.5:4000", "198.51.100.1", "203.0.113.5"},
		{"the ingress's client", "10.1.2.3:4000", "198.51.100.1", "198.51.100.1"},
		{"a forged entry left of the real one", "10.1.2.3:4000", "1.2.3.4, 198.51.100.1", "198.51.100.1"},
		{"two proxies", "10.1.2.3:4000", "198.51.100.1, 192.0.2.7", "198.51.100.1"},
		{"an IPv6 proxy", "[fd00::5]:80", "2001:db8::1", "2001:db8::1"},
		{"a proxy without the header", "10.1.2.3:4000", "", "10.1.2.3"},
		{"a broken entry", "10.1.2.3:4000", "nonsense", "10.1.2.3"},
		{"only proxies", "10.1.2.3:4000", "10.9.9.9", "10.9.9.9"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		var got string
		Forwarded(trusted, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = ClientAddress(r) })).ServeHTTP(httptest.NewRecorder(), r)
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "ten", "10.0.0.1/8/8"} {
		if _, err := ParseProxies(bad); err == nil {
			t.Errorf("ParseProxies(%q) accepted", bad)
		}
	}
}

func FuzzParseProxies(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8", "fd00::/8, 192.0.2.7", "", ",", "::ffff:10.0.0.1/104"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		prefixes, err := ParseProxies(text)
		if err != nil {
			return
		}
		for _, p := range prefixes {
			if !p.IsValid() {
				t.Fatalf("%q gave an invalid prefix %v", text, p)
			}
		}
	})
}

// FuzzForwarded: any header from a trusted proxy yields an address, never
// a panic, and a stranger's header is never believed.
func FuzzForwarded(f *testing.F) {
	for _, s := range []string{"198.51.100.1", "1.2.3.4, 10.0.0.1", "", ",,,", "::1,x"} {
		f.Add(s, true)
	}
	trusted, _ := ParseProxies("10.0.0.0/8")
	f.Fuzz(func(t *testing.T, xff string, fromProxy bool) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "203.0.113.5:1"
		if fromProxy {
			r.RemoteAddr = "10.0.0.1:1"
		}
		r.Header.Set("X-Forwarded-For", xff)
		a, ok := forwardedClient(trusted, r)
		if !fromProxy && ok {
			t.Fatalf("a stranger's header was believed: %v", a)
		}
	})
}
