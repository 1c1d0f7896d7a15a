package main

import (
	"flag"
	"io"
	"testing"
)

// Run outside a cluster, the manager cannot guess a namespace for its
// leader-election Lease: the flag names one.
func TestLeaderElectionNamespaceFlag(t *testing.T) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, err := parseFlags(fs, []string{"--leader-election-namespace=msgbridge-system"})
	if err != nil {
		t.Fatal(err)
	}
	if o.leaderElectNS != "msgbridge-system" {
		t.Errorf("leader-election namespace %q, want msgbridge-system", o.leaderElectNS)
	}
	if o, _ := parseFlags(flag.NewFlagSet("manager", flag.ContinueOnError), nil); o.leaderElectNS != "" {
		t.Errorf("default %q, want empty (the pod's namespace)", o.leaderElectNS)
	}
}
