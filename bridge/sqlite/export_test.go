package sqlite

import "time"

// SetIdleConnLifetime sets idleConnLifetime for a test and returns what
// puts it back.
func SetIdleConnLifetime(d time.Duration) (restore func()) {
	was := idleConnLifetime
	idleConnLifetime = d
	return func() { idleConnLifetime = was }
}
