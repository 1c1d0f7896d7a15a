// Package durable is the engine of the bridge's durable work over SQLite
// rows: the send queue, the webhook outbox and the media downloader keep
// their tables and their rules (what to do with a row, its retry schedule,
// its ordering), and run on the parts here:
//
//   - Loop, the scheduler: a pass over what is due now, then a sleep until
//     the next due time, a wake (Signal) or the end;
//   - Signal, the wake on insert (and on an ended attempt);
//   - Claims, a row taken by one worker at a time, and Lanes, rows taken one
//     at a time per ordering key, never again from a stale due list;
//   - Schedule and Backoff, the retry delays;
//   - Every and Chunked, the periodic sweeps that delete in short
//     transactions.
//
// Claims are held in memory, for the life of the process: a row's outcome
// is written only after its attempt, so a row that a crash (kill -9)
// interrupted is still due on disk and the next start attempts it again.
// That is the crash recovery; no lease has to expire first.
package durable

import (
	"sync/atomic"
	"time"
)

// Clock is the engine's time: Now, and timers. Tests inject a clock they
// move by hand, so that nothing waits for real time.
type Clock interface {
	Now() time.Time
	// Timer returns a channel that receives once d has passed, and a
	// function that stops the timer.
	Timer(d time.Duration) (<-chan time.Time, func())
}

// ClockOf is the real clock with now as its time (nil: time.Now), for the
// packages whose tests move Now but not timers.
func ClockOf(now func() time.Time) Clock {
	if now == nil {
		now = time.Now
	}
	return systemClock{now: now}
}

type systemClock struct{ now func() time.Time }

func (c systemClock) Now() time.Time { return c.now() }

func (systemClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// Signal wakes a sleeping Loop. Signals coalesce: one pending wake stands
// for any number of Notify calls, so Notify never blocks. The Loop that
// waits on it publishes until when it sleeps, so that NotifyDue can spare
// it a pass for a row it would see in time anyway.
type Signal struct {
	wake chan struct{}
	// sleepsUntil is the loop's wake-up time in Unix milliseconds while it
	// sleeps, 0 while it is awake (reading the table, or about to).
	sleepsUntil atomic.Int64
}

// NewSignal returns a Signal with room for one pending wake.
func NewSignal() *Signal { return &Signal{wake: make(chan struct{}, 1)} }

// Notify wakes the loop that waits on s, now or at its next sleep.
func (s *Signal) Notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// NotifyDue wakes the loop for a row due at due unless the loop sleeps
// until no later than that: it then reads the table in time by itself. A
// burst of inserts due later (sends accepted while no session is linked)
// then costs the loop nothing until they are due; a wake per insert made
// it read the due rows once per request, which halved the accepted rate.
// Call it after the row's transaction commits.
func (s *Signal) NotifyDue(due time.Time) {
	until := s.sleepsUntil.Load()
	if until == 0 || due.UnixMilli() < until {
		s.Notify() // awake (it may have read the table before the commit), or due earlier
	}
}

// Pending reports whether a wake is waiting to be taken; Sleeping whether
// the loop sleeps; SleepingUntil stands for a loop asleep until at. For the
// tests of the packages that run on the engine.
func (s *Signal) Pending() bool { return len(s.wake) > 0 }

func (s *Signal) Sleeping() bool { return s.sleepsUntil.Load() != 0 }

func (s *Signal) SleepingUntil(at time.Time) { s.sleeping(at) }

// sleeping publishes that the loop sleeps until at; awake ends that.
func (s *Signal) sleeping(at time.Time) { s.sleepsUntil.Store(max(at.UnixMilli(), 1)) }

func (s *Signal) awake() { s.sleepsUntil.Store(0) }
