package logging

import (
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
)

// The key and value that make an Info line a warning (see the package doc).
const (
	levelKey  = "level"
	warnValue = "warn"
)

// sink implements logr.LogSink. It is immutable once built (WithName and
// WithValues return copies), so loggers derived from it are safe to use from
// any goroutine; the only shared state is Files, behind its mutex.
type sink struct {
	out  *Files
	min  Level
	now  func() time.Time
	name string
	// values are the WithValues pairs, already rendered as ,"k":v so that
	// a logger with context does not re-encode it on every line.
	values []byte
	// warn: WithValues carried "level"="warn".
	warn bool
}

var _ logr.LogSink = (*sink)(nil)

func (s *sink) Init(logr.RuntimeInfo) {}

// Enabled answers for V-levels: V(0) carries info and warn lines, so it is
// on unless only errors are wanted; V(1) and beyond are debug.
func (s *sink) Enabled(v int) bool {
	if v > 0 {
		return s.min <= LevelDebug
	}
	return s.min <= LevelWarn
}

func (s *sink) Info(v int, msg string, kvs ...any) {
	level := LevelInfo
	if v > 0 {
		level = LevelDebug
	}
	if s.warn {
		level = LevelWarn
	}
	kvs, isWarn := takeWarn(kvs)
	if isWarn {
		level = LevelWarn
	}
	if level < s.min {
		return // an info line at LOG_LEVEL=warn
	}
	s.emit(level, msg, kvs, nil)
}

func (s *sink) Error(err error, msg string, kvs ...any) {
	kvs, _ = takeWarn(kvs) // an error stays an error
	s.emit(LevelError, msg, kvs, err)
}

func (s *sink) WithValues(kvs ...any) logr.LogSink {
	c := *s
	kvs, isWarn := takeWarn(kvs)
	c.warn = c.warn || isWarn
	c.values = appendPairs(append([]byte(nil), s.values...), kvs, reservedError)
	return &c
}

func (s *sink) WithName(name string) logr.LogSink {
	c := *s
	if c.name == "" {
		c.name = name
	} else {
		c.name += "." + name
	}
	return &c
}

// takeWarn removes "level"="warn" pairs from kvs, reporting whether there
// was one. It copies only when it removes something.
func takeWarn(kvs []any) ([]any, bool) {
	found := -1
	for i := 0; i+1 < len(kvs); i += 2 {
		if k, ok := kvs[i].(string); ok && k == levelKey && kvs[i+1] == warnValue {
			found = i
			break
		}
	}
	if found < 0 {
		return kvs, false
	}
	rest := make([]any, 0, len(kvs)-2)
	rest = append(rest, kvs[:found]...)
	rest, _ = takeWarn(append(rest, kvs[found+2:]...))
	return rest, true
}

// The builtin fields; a caller's key of the same name is renamed key_.
func reservedInfo(k string) bool {
	return k == "ts" || k == "level" || k == "logger" || k == "msg"
}

func reservedError(k string) bool { return reservedInfo(k) || k == "error" }

const maxPooledLine = 64 << 10

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func (s *sink) emit(level Level, msg string, kvs []any, err error) {
	at := s.now()
	bp := linePool.Get().(*[]byte)
	b := (*bp)[:0]
	b = append(b, `{"ts":"`...)
	b = at.UTC().AppendFormat(b, bridge.TimeLayout)
	b = append(b, `","level":"`...)
	b = append(b, level.String()...)
	b = append(b, '"')
	if s.name != "" {
		b = append(b, `,"logger":`...)
		b = appendString(b, s.name)
	}
	b = append(b, `,"msg":`...)
	b = appendString(b, msg)
	b = append(b, s.values...)
	reserved := reservedInfo
	if err != nil {
		reserved = reservedError
	}
	b = appendPairs(b, kvs, reserved)
	if err != nil {
		b = append(b, `,"error":`...)
		b = appendValue(b, err, 0)
	}
	b = append(b, "}\n"...)
	s.out.write(level, at, b)
	if cap(b) <= maxPooledLine { // one huge line must not pin its buffer for good
		*bp = b
		linePool.Put(bp)
	}
}
