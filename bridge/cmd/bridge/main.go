// Command bridge links one WhatsApp account and serves the msgbridge HTTP API.
//
// Settings come from environment variables or flags;
// an invalid one stops start-up with one line naming it, exit status 2.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/msgbridge/msgbridge/bridge/logging"
	"github.com/msgbridge/msgbridge/bridge/settings"
)

// Exit statuses: 2 for a setting or command-line problem, 1 for a failure
// while running.
const (
	exitRunFailed  = 1
	exitBadSetting = 2
)

func main() {
	tuneGC(os.LookupEnv)
	os.Exit(runUntilSignal())
}

// defaultGCPercent is the bridge's GOGC when the environment sets none (Go's
// own is 100). Its live heap is a few MB, so the heap Go lets grow above it
// before collecting is a large share of an idle bridge's memory; half of it
// costs a little CPU under load (BenchmarkAcceptedSends) and saves that
// memory at rest (BenchmarkIdleRSS).
const defaultGCPercent = 50

// tuneGC applies defaultGCPercent unless GOGC is set: an operator's own
// GOGC (and GOMEMLIMIT, which Go reads itself) always wins.
func tuneGC(lookupEnv func(string) (string, bool)) {
	if _, set := lookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// runUntilSignal runs the bridge until SIGINT or SIGTERM.
func runUntilSignal() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
}

// run is the whole process; main only supplies the real world to it.
func run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) int {
	s, err := settings.Load(args, lookupEnv, stderr)
	if errors.Is(err, settings.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bridge: %v\n", err)
		return exitBadSetting
	}
	// Until DATA_DIR is locked, log to stdout only; serve adds the files.
	log, _, err := logging.New(logging.Options{Stdout: stdout, Level: s.LogLevel})
	if err != nil {
		fmt.Fprintf(stderr, "bridge: %v\n", err)
		return exitRunFailed
	}
	if err := serve(ctx, s, stdout); err != nil {
		log.Error(err, "bridge stopped")
		// Also one plain line on stderr, where a person starting the bridge
		// (or kubectl logs --previous) looks for why it exited.
		fmt.Fprintf(stderr, "bridge: %v\n", err)
		if errors.Is(err, errListen) {
			return exitBadSetting
		}
		return exitRunFailed
	}
	return 0
}
