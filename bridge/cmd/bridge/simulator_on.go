//go:build wasim

package main

import (
	"errors"
	"fmt"

	"github.com/msgbridge/msgbridge/bridge/wasim/wasimclient"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
)

// simulatorServer, in the wasim build, points the whatsmeow client at a
// running simulator (go run ./bridge/wasim/cmd/wasim) given by two settings:
//
//	WASIM_ADDR      host:port of the simulator's TLS listener
//	WASIM_ROOT_KEY  its root public key, 64 hex characters (it prints both)
//
// The simulator's TLS certificate is not verified: the Noise handshake,
// signed by the root key, authenticates it.
func simulatorServer(lookupEnv func(string) (string, bool)) (*whatsapp.Server, error) {
	addr := setting(lookupEnv, "WASIM_ADDR", linkedWasimAddr)
	hexKey := setting(lookupEnv, "WASIM_ROOT_KEY", linkedWasimRootKey)
	if addr == "" || hexKey == "" {
		return nil, errors.New("setting WASIM_ADDR and WASIM_ROOT_KEY: both are required by a bridge built with -tags wasim")
	}
	key, err := wasimclient.ParseRootKey(hexKey)
	if err != nil {
		return nil, fmt.Errorf("setting WASIM_ROOT_KEY: %w", err)
	}
	return &whatsapp.Server{HTTPClient: wasimclient.NewHTTPClient(addr, nil), RootKey: key}, nil
}

// linkedWasimAddr and linkedWasimRootKey are the two settings' defaults,
// set at link time (-ldflags "-X main.linkedWasimAddr=… -X
// main.linkedWasimRootKey=…") for a bridge whose environment the test does
// not write: the end-to-end cluster's pods (hack/e2e-images.sh).
var linkedWasimAddr, linkedWasimRootKey string

func setting(lookupEnv func(string) (string, bool), name, linked string) string {
	if v, ok := lookupEnv(name); ok && v != "" {
		return v
	}
	return linked
}
