package durable

import (
	"context"
	"time"
)

// Loop is a scheduler over a table of due rows. Run repeats: a pass over
// what is due now, then a sleep until the next due time, a wake or the end
// of its context. Every field but the hooks is required.
type Loop struct {
	// Pass handles what is due now; it logs its own errors.
	Pass func(ctx context.Context) Pass
	// NextDue is when the next row is due (ok false: none waits). A rule
	// that delays rows (a pace, a restriction) returns the later time.
	NextDue func(ctx context.Context) (at time.Time, ok bool)
	// Wake is notified on insert and whenever an attempt ends.
	Wake *Signal
	// MaxIdle bounds a sleep: a safety net, since every new due time wakes
	// the loop.
	MaxIdle time.Duration
	Clock   Clock
	// Committed, when set, runs after a wake and before the pass: a wake
	// sent from inside a transaction must not start a pass that reads the
	// table before that transaction commits (the row would be missed until
	// MaxIdle).
	Committed func(ctx context.Context)
	// Sleeping, when set, hears each sleep's bound before it starts: tests
	// wait on it instead of on a fixed sleep.
	Sleeping func(d time.Duration)
}

// Pass is what a pass reports.
type Pass struct {
	// More: the pass stopped at a full page; more may be due right now,
	// so the next pass starts at once.
	More bool
	// Held: a due row was left to another claimant (a request attempting
	// it now), whose end notifies Wake. Until then the loop sleeps rather
	// than spin on a row that stays due.
	Held bool
}

// Run runs passes until ctx ends.
func (l Loop) Run(ctx context.Context) {
	for ctx.Err() == nil {
		p := l.Pass(ctx)
		if ctx.Err() != nil {
			return
		}
		if p.More {
			continue
		}
		l.sleep(ctx, l.wait(ctx, p))
	}
}

// wait is how long to sleep after pass p.
func (l Loop) wait(ctx context.Context, p Pass) time.Duration {
	at, ok := l.NextDue(ctx)
	if !ok {
		return l.MaxIdle
	}
	d := min(max(at.Sub(l.Clock.Now()), 0), l.MaxIdle)
	if d == 0 && p.Held {
		return l.MaxIdle // the claimant's end wakes the loop
	}
	return d
}

func (l Loop) sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		if l.Sleeping != nil {
			l.Sleeping(d)
		}
		return
	}
	timer, stop := l.Clock.Timer(d)
	defer stop()
	l.Wake.sleeping(l.Clock.Now().Add(d))
	defer l.Wake.awake()
	if l.Sleeping != nil {
		l.Sleeping(d)
	}
	select {
	case <-ctx.Done():
	case <-timer:
	case <-l.Wake.wake:
		if l.Committed != nil {
			l.Committed(ctx)
		}
	}
}

// Every runs do at once and then every period until ctx ends: the
// periodic sweeps.
func Every(ctx context.Context, clock Clock, period time.Duration, do func(ctx context.Context)) {
	for ctx.Err() == nil {
		do(ctx)
		timer, stop := clock.Timer(period)
		select {
		case <-ctx.Done():
		case <-timer:
		}
		stop()
	}
}
