package logging

import "fmt"

// Level is a line's severity, and LOG_LEVEL: the lowest one written.
type Level int

// The levels, from the most to the least verbose.
const (
	LevelDebug Level = iota
	LevelInfo
	LevelWarn
	LevelError
)

var levelNames = [...]string{LevelDebug: "debug", LevelInfo: "info", LevelWarn: "warn", LevelError: "error"}

// ParseLevel accepts exactly debug, info, warn or error.
func ParseLevel(v string) (Level, error) {
	for l, name := range levelNames {
		if v == name {
			return Level(l), nil
		}
	}
	return 0, fmt.Errorf("%q is not one of debug, info, warn, error", v)
}

func (l Level) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return fmt.Sprintf("Level(%d)", int(l))
	}
	return levelNames[l]
}
