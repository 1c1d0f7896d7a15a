package settings

import "fmt"

// LogLevel is the lowest severity the bridge logs.
type LogLevel int

// The levels, from the most to the least verbose.
const (
	LevelDebug LogLevel = iota
	LevelInfo
	LevelWarn
	LevelError
)

var levelNames = [...]string{LevelDebug: "debug", LevelInfo: "info", LevelWarn: "warn", LevelError: "error"}

// ParseLogLevel accepts exactly debug, info, warn or error.
func ParseLogLevel(v string) (LogLevel, error) {
	for l, name := range levelNames {
		if v == name {
			return LogLevel(l), nil
		}
	}
	return 0, fmt.Errorf("%q is not one of debug, info, warn, error", v)
}

func (l LogLevel) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return fmt.Sprintf("LogLevel(%d)", int(l))
	}
	return levelNames[l]
}
