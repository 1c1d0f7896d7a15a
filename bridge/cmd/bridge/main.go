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
	"runtime"
	"syscall"

	"github.com/msgbridge/msgbridge/bridge/logging"
	"github.com/msgbridge/msgbridge/bridge/settings"
)

// heapProfileRate is runtime.MemProfileRate for a bridge that serves its
// profiles (PPROF) or not. The heap profile is only served with PPROF=on,
// yet Go samples an allocation every 512 KiB for it whatever the setting,
// and records each sample's stack in a hash table whose touched pages are
// anonymous memory the pod is charged for (about 1.3 MiB in an idle linked
// bridge). Without PPROF nothing reads the samples, so none are taken.
func heapProfileRate(pprof bool) int {
	if pprof {
		return defaultMemProfileRate
	}
	return 0
}

// defaultMemProfileRate is Go's own runtime.MemProfileRate.
const defaultMemProfileRate = 512 * 1024

// Exit statuses: 2 for a setting or command-line problem, 1 for a failure
// while running.
const (
	exitRunFailed  = 1
	exitBadSetting = 2
)

func main() {
	os.Exit(runUntilSignal())
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
	// Before any of the bridge's parts allocate: the settings say whether
	// anything will ever read the heap profile's samples.
	runtime.MemProfileRate = heapProfileRate(s.Pprof)
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
