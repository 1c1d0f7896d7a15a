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

// failures counts failures per key and blocks a key that reached max until
// its window or lock ends.
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

// blocked reports whether key has used up its failures and for how long more.
func (f *failures) blocked(key string) (bool, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.current(key)
	if c == nil || c.n < f.max {
		return false, 0
	}
	return true, c.since.Add(f.period).Sub(f.now())
}

// fail records a failure and reports whether it reached the limit now.
func (f *failures) fail(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.current(key)
	if c == nil {
		c = &failureCount{since: f.now()}
		f.m[key] = c
	}
	c.n++
	if c.n == f.max {
		c.since = f.now() // the lock runs from the last failure
		return true
	}
	return false
}

// reset forgets key's failures (after a success).
func (f *failures) reset(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, key)
}

// current is key's count when its period has not ended; mu is held.
func (f *failures) current(key string) *failureCount {
	c, ok := f.m[key]
	if !ok {
		return nil
	}
	if !f.now().Before(c.since.Add(f.period)) {
		delete(f.m, key)
		return nil
	}
	return c
}
