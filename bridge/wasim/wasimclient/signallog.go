package wasimclient

import (
	"fmt"
	"time"

	"go.mau.fi/libsignal/logger"
)

// libsignal creates its package-level logger lazily on first use, which is
// a data race when two goroutines encrypt or sign for the first time at
// once (the race detector reports it in tests with several clients or a
// simulator). Installing an equivalent logger during package
// initialisation, before main or TestMain run, removes the race. It prints
// what libsignal's default logger prints: info, warnings and errors on
// stdout, no debug.
func init() {
	if logger.Logger == nil {
		var l logger.Loggable = signalLogger{}
		logger.Setup(&l)
	}
}

type signalLogger struct{}

func (signalLogger) Debug(string, string) {}
func (signalLogger) Info(caller, msg string) {
	printSignal("INFO", caller, msg)
}
func (signalLogger) Warning(caller, msg string) {
	printSignal("WARNING", caller, msg)
}
func (signalLogger) Error(caller, msg string) {
	printSignal("ERROR", caller, msg)
}
func (signalLogger) Configure(string) {}

func printSignal(level, caller, msg string) {
	fmt.Println("["+level+"]", time.Now().Format(time.RFC3339), caller, "▶ ", msg)
}
