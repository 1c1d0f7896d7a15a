// Package wasimclient points an unmodified whatsmeow client at a wasim
// simulator instead of WhatsApp's servers.
//
// It is the only part of the simulator a bridge binary built with the `wasim`
// tag needs: it depends on whatsmeow and the standard library only. The
// simulator itself lives in the parent package and is used by tests and by the
// standalone simulator process (bridge/wasim/cmd/wasim).
//
// Two things are needed for a client to talk to a simulator:
//
//  1. The process-wide whatsmeow.WACertPubKey must hold the simulator's root
//     public key, which signs the certificate chain of the simulator's Noise
//     handshake. Install (or InstallRootKey) sets it exactly once, and must
//     run before any whatsmeow client goroutine starts (e.g. in TestMain),
//     because whatsmeow reads it without locking.
//  2. Per client, the HTTP clients used for the websocket and for media must
//     dial the simulator's address: Configure does that.
//
// The bridge itself does neither: a bridge built with the `wasim` tag hands
// NewHTTPClient's client and the root key to bridge/whatsapp (its Server
// option), which configures its own clients. whatsmeow's keepalive timings
// have one writer, whatsapp.TuneKeepAlive; tests that need a ghost
// connection noticed quickly call it.
package wasimclient

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
)

// Globals are the process-wide whatsmeow settings a simulator needs.
type Globals struct {
	// RootKey is the simulator's root public key (Curve25519, 32 bytes).
	RootKey [32]byte
}

// ErrAlreadyInstalled is returned when Install is called again with
// different settings: the globals cannot change once clients may be running.
var ErrAlreadyInstalled = errors.New("wasimclient: whatsmeow globals already installed with different settings")

var (
	installMu sync.Mutex
	installed *Globals
)

// Install sets whatsmeow.WACertPubKey once per process. Calling it again
// with the same settings is a no-op; different settings return
// ErrAlreadyInstalled and change nothing.
//
// It must run before any whatsmeow client goroutine starts: whatsmeow reads
// the variable without synchronisation.
func Install(g Globals) error {
	installMu.Lock()
	defer installMu.Unlock()
	if installed != nil {
		if *installed == g {
			return nil
		}
		return ErrAlreadyInstalled
	}
	whatsmeow.WACertPubKey = g.RootKey
	installed = &g
	return nil
}

// InstallRootKey is Install with the root key given as 64 hex characters
// (what the simulator process prints at start and serves on its control
// API).
func InstallRootKey(hexKey string) error {
	key, err := ParseRootKey(hexKey)
	if err != nil {
		return err
	}
	return Install(Globals{RootKey: key})
}

// ParseRootKey decodes a root public key from 64 hex characters.
func ParseRootKey(hexKey string) ([32]byte, error) {
	var key [32]byte
	raw, err := hex.DecodeString(strings.TrimSpace(hexKey))
	if err != nil || len(raw) != len(key) {
		return key, fmt.Errorf("wasimclient: root key must be 64 hex characters (32 bytes)")
	}
	copy(key[:], raw)
	return key, nil
}

// Configure makes cli connect to the simulator at addr (host:port of its TLS
// listener) for the websocket (before and after login) and for media.
//
// The TLS certificate is not verified. That is safe for this test-only
// wiring: the simulator is authenticated by the Noise handshake, whose
// certificate chain must be signed by the root key from Install. Use
// ConfigureTLS to verify the certificate as well.
func Configure(cli *whatsmeow.Client, addr string) {
	ConfigureTLS(cli, addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // see the doc comment
}

// ConfigureTLS is Configure with a caller-provided TLS configuration, e.g.
// one trusting the simulator's certificate with ServerName set to a name in
// that certificate (the client asks for web.whatsapp.com and mmg.whatsapp.net).
func ConfigureTLS(cli *whatsmeow.Client, addr string, tlsConf *tls.Config) {
	h := NewHTTPClient(addr, tlsConf)
	cli.SetWebsocketHTTPClient(h)
	cli.SetPreLoginHTTPClient(h)
	cli.SetMediaHTTPClient(h)
}

// NewHTTPClient returns an HTTP client that sends every request, whatever
// its host, to addr over TLS with tlsConf (nil means no verification, see
// Configure).
func NewHTTPClient(addr string, tlsConf *tls.Config) *http.Client {
	if tlsConf == nil {
		tlsConf = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // see Configure
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{
		Timeout: 0, // websockets live long; whatsmeow sets its own deadlines
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, addr)
			},
			TLSClientConfig:     tlsConf.Clone(),
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 4,
		},
	}
}
