package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/settings"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// loadSettings is a valid set of settings (credentials long enough) over
// dataDir and the key.
func loadSettings(t testing.TB, dataDir, keyHex string) *settings.Settings {
	t.Helper()
	env := map[string]string{
		"LISTEN_ADDR": "127.0.0.1:0", "DATA_DIR": dataDir, "ENCRYPTION_KEY": keyHex,
		"API_KEY": "api-key-0123456789abcdef", "ADMIN_TOKEN": "admin-token-0123456789abcdef",
	}
	s, err := settings.Load(nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Start-up checks every database with the key at once and keeps the
// checked bridge.db open: a restart builds on the same files, and a wrong
// key still stops it before any database is created.
func TestBuildVerifiesTheKeyBeforeCreatingAnything(t *testing.T) {
	dataDir := t.TempDir()
	a, err := build(context.Background(), loadSettings(t, dataDir, testutil.TestKeyHex), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a.close()
	// A restart opens the existing bridge.db once and migrates it.
	a, err = build(context.Background(), loadSettings(t, dataDir, testutil.TestKeyHex), io.Discard)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	if err := a.db.PingContext(context.Background()); err != nil {
		t.Fatalf("bridge.db after a restart: %v", err)
	}
	a.close()

	// Another key: refused, and the session store the first runs made is
	// the only one; remove it to see that nothing is created again.
	session := filepath.Join(dataDir, "credentials", "session.db")
	if err := os.Remove(session); err != nil {
		t.Fatal(err)
	}
	_, err = build(context.Background(), loadSettings(t, dataDir, strings.Repeat("cd", 32)), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "ENCRYPTION_KEY") {
		t.Fatalf("another key: %v, want an ENCRYPTION_KEY error", err)
	}
	if _, err := os.Stat(session); !os.IsNotExist(err) {
		t.Errorf("a wrong key created %s (%v)", session, err)
	}
}
