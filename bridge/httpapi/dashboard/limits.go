package dashboard

import (
	"sync"
	"time"
)

// Failed sign-ins per client address allowed in signInWindow; more are
// refused with 429 until the window passes, which makes guessing the admin
// token by the dashboard hopeless without locking the operator out for long.
const (
	maxSignInFailures = 5
	signInWindow      = time.Minute
)

// Wrong one-time codes allowed for an action before it locks, and for how
// long; the lock is for the action, whoever asks, because an attacker who
// passed the sign-in can change address.
const (
	maxCodeFailures = 5
	codeLockout     = 5 * time.Minute
)

// sweepAbove is the number of keys above which an attempt first drops the
// keys whose period has ended, so that many addresses cannot grow the map
// without bound.
const sweepAbove = 1024

// failures limits attempts per key: each attempt counts as a failure until
// it is reset as a success, and a key that reached max is refused until its
// period after the last counted attempt ends. Counting before the check
// makes the limit exact under concurrent attempts.
type failures struct {
	max    int
	period time.Duration
	now    func() time.Time

	mu sync.Mutex
	m  map[string]*failureCount
}

type failureCount struct {
	n     int
	since time.Time // first failure of the window, or start of the lock
}

func newFailures(max int, period time.Duration, now func() time.Time) *failures {
	return &failures{max: max, period: period, now: now, m: map[string]*failureCount{}}
}

// attempt counts an attempt for key. It returns false, and how long the
// key stays blocked, when key has used up its attempts; otherwise last
// tells whether this attempt, should it fail, is the one that locks.
func (f *failures) attempt(key string) (ok bool, left time.Duration, last bool) {
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
		return false, c.since.Add(f.period).Sub(now), false
	}
	c.n++
	if c.n == f.max {
		c.since = now // the lock runs from the last failure
	}
	return true, 0, c.n == f.max
}

// reset forgets key's failures (after a success).
func (f *failures) reset(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, key)
}

// current is key's count when its period has not ended, dropping it when
// it has; mu is held.
func (f *failures) current(key string, now time.Time) *failureCount {
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
