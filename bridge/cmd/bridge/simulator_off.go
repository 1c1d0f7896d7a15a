//go:build !wasim

package main

import "github.com/msgbridge/msgbridge/bridge/whatsapp"

// simulatorServer is nil in production builds: the client talks to
// WhatsApp. The wasim build (simulator_on.go) points it at bridge/wasim
// instead, and the production binary never links the simulator.
func simulatorServer(func(string) (string, bool)) (*whatsapp.Server, error) {
	return nil, nil
}
