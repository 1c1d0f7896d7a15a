package guard

import (
	"sync"
	"time"
)

// sweepAbove is the number of keys above which an attempt first drops the
// keys whose period has ended, so that many addresses cannot grow the map
// without bound.
const sweepAbove = 1024

// Failures limits attempts per key: each attempt counts as a failure until
// it is reset as a success, and a key that reached max is refused until its
// period after the last counted attempt ends. Counting before the check
// makes the limit exact under concurrent attempts.
type Failures struct {
	max    int
	period time.Duration
	now    func() time.Time

	mu sync.Mutex
	m  map[string]*failureCount
}

type failureCount struct {
	n     int
	since time.Time // first failure of the window, or start of the lock
	// refused is set once an attempt was refused in the lock.
	refused bool
}

// NewFailures allows max attempts per key in period.
func NewFailures(max int, period time.Duration, now func() time.Time) *Failures {
	return &Failures{max: max, period: period, now: now, m: map[string]*failureCount{}}
}

// Attempt counts an attempt for key. It returns false, and how long the
// key stays blocked, when key has used up its attempts; otherwise last
// tells whether this attempt, should it fail, is the one that locks.
func (f *Failures) Attempt(key string) (ok bool, left time.Duration, last bool) {
	n, left, _ := f.attempt(key)
	return n > 0, left, n == f.max
}

// attempt counts an attempt for key: n is its number in the current period
// (1 the first), or 0 when key is blocked for left; firstRefusal marks the
// first attempt refused in a block, so that a block is reported once.
func (f *Failures) attempt(key string) (n int, left time.Duration, firstRefusal bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if len(f.m) > sweepAbove {
		for k := range f.m {
			f.current(k, now)
		}
	}
	c := f.current(key, now)
	if c == nil {
		c = &failureCount{since: now}
		f.m[key] = c
	}
	if c.n >= f.max {
		firstRefusal, c.refused = !c.refused, true
		return 0, c.since.Add(f.period).Sub(now), firstRefusal
	}
	c.n++
	if c.n == f.max {
		c.since = now // the lock runs from the last failure
	}
	return c.n, 0, false
}

// Reset forgets key's failures (after a success).
func (f *Failures) Reset(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, key)
}

// current is key's count when its period has not ended, dropping it when
// it has; mu is held.
func (f *Failures) current(key string, now time.Time) *failureCount {
	c, ok := f.m[key]
	if !ok {
		return nil
	}
	if !now.Before(c.since.Add(f.period)) {
		delete(f.m, key)
		return nil
	}
	return c
}

// blocked is how long key stays blocked, without counting an attempt.
func (f *Failures) blocked(key string) (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	c := f.current(key, now)
	if c == nil || c.n < f.max {
		return 0, false
	}
	return c.since.Add(f.period).Sub(now), true
}
