package wasimclient

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow"
)

func TestParseRootKey(t *testing.T) {
	key, err := ParseRootKey(" " + strings.Repeat("ab", 32) + "\n")
	if err != nil || key[0] != 0xab || key[31] != 0xab {
		t.Fatalf("ParseRootKey: %x, %v", key, err)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("ab", 31), strings.Repeat("zz", 32), strings.Repeat("ab", 33)} {
		if _, err := ParseRootKey(bad); err == nil {
			t.Errorf("ParseRootKey(%q) accepted", bad)
		}
	}
}

// Install sets the globals once: the same settings again are a no-op,
// different ones are refused and change nothing.
func TestInstallOnce(t *testing.T) {
	keepAlive := whatsmeow.KeepAliveIntervalMax
	if err := Install(Globals{RootKey: [32]byte{1}}); err != nil {
		t.Fatal(err)
	}
	if whatsmeow.WACertPubKey != [32]byte{1} {
		t.Fatal("globals not set")
	}
	if whatsmeow.KeepAliveIntervalMax != keepAlive {
		t.Fatal("the keepalive timings changed; whatsapp.TuneKeepAlive is their one writer")
	}
	if err := Install(Globals{RootKey: [32]byte{1}}); err != nil {
		t.Fatalf("same settings: %v", err)
	}
	if err := InstallRootKey(strings.Repeat("02", 32)); !errors.Is(err, ErrAlreadyInstalled) {
		t.Fatalf("different key: %v, want ErrAlreadyInstalled", err)
	}
	if whatsmeow.WACertPubKey != [32]byte{1} {
		t.Fatal("a refused Install changed the key")
	}
}

// NewHTTPClient sends every host to the simulator's address.
func TestNewHTTPClientDialsAddr(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Host)
	}))
	defer srv.Close()
	h := NewHTTPClient(srv.Listener.Addr().String(), nil)
	resp, err := h.Get("https://mmg.whatsapp.net/anything")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "mmg.whatsapp.net" {
		t.Fatalf("server saw host %q", body)
	}
}
