package testutil

import (
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
)

// Logger is a logr.Logger that writes to tb's log until tb's clean-up, and
// drops what is logged after it. Goroutines of the code under test may
// outlive the test (whatsmeow's post-connect work logs a failed prekey count
// after a disconnect), and testing panics on a Log after its test completed:
// that panic failed unrelated test runs by chance.
func Logger(tb testing.TB) logr.Logger {
	state := &logGate{helper: tb.Helper}
	tb.Cleanup(state.close)
	return logr.New(&gatedSink{gate: state, sink: testr.NewWithInterface(tb, testr.Options{}).GetSink()})
}

// logGate is shared by a logger and those derived from it: close waits for
// the calls in progress, so none reaches the test after it ends.
type logGate struct {
	mu     sync.RWMutex
	closed bool
	helper func() // the test's Helper: lines name the caller, not this file
}

func (g *logGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
}

// open runs log unless the gate is closed.
func (g *logGate) open(log func()) {
	g.helper()
	g.mu.RLock()
	defer g.mu.RUnlock()
	if !g.closed {
		log()
	}
}

type gatedSink struct {
	gate *logGate
	sink logr.LogSink
}

func (s *gatedSink) Init(info logr.RuntimeInfo) { s.sink.Init(info) }

func (s *gatedSink) Enabled(level int) bool { return s.sink.Enabled(level) }

func (s *gatedSink) Info(level int, msg string, kv ...any) {
	s.gate.helper()
	s.gate.open(func() { s.gate.helper(); s.sink.Info(level, msg, kv...) })
}

func (s *gatedSink) Error(err error, msg string, kv ...any) {
	s.gate.helper()
	s.gate.open(func() { s.gate.helper(); s.sink.Error(err, msg, kv...) })
}

func (s *gatedSink) WithValues(kv ...any) logr.LogSink {
	return &gatedSink{gate: s.gate, sink: s.sink.WithValues(kv...)}
}

func (s *gatedSink) WithName(name string) logr.LogSink {
	return &gatedSink{gate: s.gate, sink: s.sink.WithName(name)}
}
