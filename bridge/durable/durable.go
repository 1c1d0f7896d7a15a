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

import "time"

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
// for any number of Notify calls, so Notify never blocks.
type Signal chan struct{}

// NewSignal returns a Signal with room for one pending wake.
func NewSignal() Signal { return make(Signal, 1) }

// Notify wakes the loop that waits on s, now or at its next sleep.
func (s Signal) Notify() {
	select {
	case s <- struct{}{}:
	default:
	}
}
