//go:build wasim

package main

import (
	"errors"
	"fmt"

	"go.mau.fi/whatsmeow"

	"github.com/msgbridge/msgbridge/bridge/wasim/wasimclient"
)

// simulatorClient, in the wasim build, points the whatsmeow client at a
// running simulator (go run ./bridge/wasim/cmd/wasim) given by two settings:
//
//	WASIM_ADDR      host:port of the simulator's TLS listener
//	WASIM_ROOT_KEY  its root public key, 64 hex characters (it prints both)
//
// The root key goes into whatsmeow's process-wide certificate check here,
// before any client exists.
func simulatorClient(lookupEnv func(string) (string, bool)) (func(*whatsmeow.Client), error) {
	addr, _ := lookupEnv("WASIM_ADDR")
	key, _ := lookupEnv("WASIM_ROOT_KEY")
	if addr == "" || key == "" {
		return nil, errors.New("setting WASIM_ADDR and WASIM_ROOT_KEY: both are required by a bridge built with -tags wasim")
	}
	if err := wasimclient.InstallRootKey(key); err != nil {
		return nil, fmt.Errorf("setting WASIM_ROOT_KEY: %w", err)
	}
	return func(cli *whatsmeow.Client) { wasimclient.Configure(cli, addr) }, nil
}
