//go:build !wasim

package main

import "go.mau.fi/whatsmeow"

// simulatorClient is nil in production builds: the client talks to WhatsApp.
// The wasim build (simulator_on.go) points it at bridge/wasim instead, and
// the production binary never links the simulator.
func simulatorClient(func(string) (string, bool)) (func(*whatsmeow.Client), error) {
	return nil, nil
}
