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
	addr, _ := lookupEnv("WASIM_ADDR")
	hexKey, _ := lookupEnv("WASIM_ROOT_KEY")
	if addr == "" || hexKey == "" {
		return nil, errors.New("setting WASIM_ADDR and WASIM_ROOT_KEY: both are required by a bridge built with -tags wasim")
	}
	key, err := wasimclient.ParseRootKey(hexKey)
	if err != nil {
		return nil, fmt.Errorf("setting WASIM_ROOT_KEY: %w", err)
	}
	return &whatsapp.Server{HTTPClient: wasimclient.NewHTTPClient(addr, nil), RootKey: key}, nil
}
