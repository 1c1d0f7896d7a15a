package main

import (
	"flag"
	"io"
	"os"
	"os/exec"
	"strings"
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

// Issue 32.5: the chart's values schema accepts what the operator's flags
// accept and refuses what they refuse, so that a bad value fails at helm
// install instead of in a crash-looping pod.
func TestValuesSchemaMatchesFlags(t *testing.T) {
	helm := os.Getenv("HELM")
	if testing.Short() || helm == "" {
		t.Skip("needs HELM (make test sets it)")
	}
	cases := []struct {
		value, flag, setting string
		ok                   bool
	}{
		{"logLevel", "--zap-log-level", "2", true},
		{"logLevel", "--zap-log-level", "debug", true},
		{"logLevel", "--zap-log-level", "panic", true},
		{"logLevel", "--zap-log-level", "warn", false},
		{"logLevel", "--zap-log-level", "0", false},
		{"pollInterval", "--poll-interval", "30s", true},
		{"pollInterval", "--poll-interval", "1m30s", true},
		{"pollInterval", "--poll-interval", "1ns", false},
		{"pollInterval", "--poll-interval", "500ms", false},
		{"pollInterval", "--poll-interval", "0s", false},
		{"heartbeatStatusRefresh", "--heartbeat-status-refresh", "0s", true},
		{"heartbeatStatusRefresh", "--heartbeat-status-refresh", "5m", true},
		{"heartbeatStatusRefresh", "--heartbeat-status-refresh", "10ms", false},
		{"bridgeTimeout", "--bridge-timeout", "500ms", true},
		{"bridgeTimeout", "--bridge-timeout", "5s", true},
		{"bridgeTimeout", "--bridge-timeout", "10ms", false},
		{"maxConcurrentReconciles", "--max-concurrent-reconciles", "0", false},
		{"maxConcurrentReconciles", "--max-concurrent-reconciles", "16", true},
		{"maxRollingBridges", "--max-rolling-bridges", "0", true},
		{"maxRollingBridges", "--max-rolling-bridges", "-1", false},
	}
	for _, tc := range cases {
		fs := flag.NewFlagSet("manager", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		_, flagErr := parseFlags(fs, []string{tc.flag + "=" + tc.setting})
		out, helmErr := exec.Command(helm, "template", "msgbridge", "charts/msgbridge", "--set", tc.value+"="+tc.setting).CombinedOutput()
		if (flagErr == nil) != tc.ok {
			t.Errorf("%s=%s: operator error %v, want ok=%v", tc.flag, tc.setting, flagErr, tc.ok)
		}
		if (helmErr == nil) != tc.ok {
			t.Errorf("%s=%s: helm %v, want ok=%v\n%s", tc.value, tc.setting, helmErr, tc.ok, firstLine(out))
		}
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}

// Issue 32.5: --watch-namespaces limits the operator's caches; a name that
// is not a namespace name is refused.
func TestWatchNamespacesFlag(t *testing.T) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o, err := parseFlags(fs, []string{"--watch-namespaces=team-a,team-b"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cacheOptions(o.watchNamespaces).DefaultNamespaces; len(got) != 2 {
		t.Errorf("cache namespaces %v, want team-a and team-b", got)
	}
	if got := cacheOptions(nil).DefaultNamespaces; got != nil {
		t.Errorf("cache namespaces %v without the flag, want every namespace", got)
	}
	fs = flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := parseFlags(fs, []string{"--watch-namespaces=Team_A"}); err == nil {
		t.Error("--watch-namespaces=Team_A accepted")
	}
}
