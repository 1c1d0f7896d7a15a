package whatsapp

import (
	"fmt"

	"github.com/go-logr/logr"
	waLog "go.mau.fi/whatsmeow/util/log"
)

// waLogger routes whatsmeow's printf-style logs into the bridge's logr
// logger. logr has no warn level: warnings are info lines with level "warn",
// and whatsmeow's debug output (every frame) is V(1), shown only at
// LOG_LEVEL=debug.
type waLogger struct{ log logr.Logger }

func newWALogger(log logr.Logger) waLog.Logger { return waLogger{log: log.WithName("whatsmeow")} }

func (l waLogger) Errorf(msg string, args ...any) {
	l.log.Error(nil, fmt.Sprintf(msg, args...))
}

func (l waLogger) Warnf(msg string, args ...any) {
	l.log.Info(fmt.Sprintf(msg, args...), "level", "warn")
}

func (l waLogger) Infof(msg string, args ...any) {
	l.log.Info(fmt.Sprintf(msg, args...))
}

func (l waLogger) Debugf(msg string, args ...any) {
	if l.log.V(1).Enabled() { // formatting every frame costs; skip it when unseen
		l.log.V(1).Info(fmt.Sprintf(msg, args...))
	}
}

func (l waLogger) Sub(module string) waLog.Logger {
	return waLogger{log: l.log.WithName(module)}
}
