package main

import "testing"

func TestHeapProfileIsSampledOnlyWhenItCanBeServed(t *testing.T) {
	for _, c := range []struct {
		env  string
		args []string
		want bool
	}{
		{"", nil, false},
		{"off", []string{"--listen-addr=:8080"}, false},
		{"on", nil, true},
		{"off", []string{"--pprof=on"}, true},
		{"", []string{"-pprof", "on"}, true},
		{"", []string{"--api-key", "pprof"}, true}, // in doubt: sampled
	} {
		if got := heapProfileWanted(c.env, c.args); got != c.want {
			t.Errorf("PPROF=%q args %q: %v, want %v", c.env, c.args, got, c.want)
		}
	}
}
