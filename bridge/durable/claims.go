package durable

import "sync"

// Claims are the keys (rows, or the ordering keys of rows) taken by one
// worker at a time. The zero value is ready to use.
type Claims[K comparable] struct {
	mu   sync.Mutex
	held map[K]bool
}

// TryClaim takes k unless it is held; it reports whether it did.
func (c *Claims[K]) TryClaim(k K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[k] {
		return false
	}
	if c.held == nil {
		c.held = map[K]bool{}
	}
	c.held[k] = true
	return true
}

// Release gives k back.
func (c *Claims[K]) Release(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, k)
}

// Held reports whether k is taken.
func (c *Claims[K]) Held(k K) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[k]
}

// Lanes carry rows one at a time per lane (an ordering key: a chat, a
// webhook's ordering key) and remember the rows that ended since the
// current scan began. A scan reads its due list at its start; a row on it
// that was attempted and rescheduled since is stale there, and taking it
// again would repeat a delivery or skip its retry delay (the stale due
// list). The zero value is ready to use.
type Lanes[L, R comparable] struct {
	mu    sync.Mutex
	busy  map[L]bool
	ended map[R]bool
}

// BeginScan forgets the rows ended before now: the scan that starts reads
// them as they are since.
func (l *Lanes[L, R]) BeginScan() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.ended)
}

// TryTake takes row of lane unless the lane carries a row or row ended
// since the scan began; it reports whether it did.
func (l *Lanes[L, R]) TryTake(lane L, row R) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.busy[lane] || l.ended[row] {
		return false
	}
	if l.busy == nil {
		l.busy = map[L]bool{}
	}
	l.busy[lane] = true
	return true
}

// Done frees lane once row's outcome is committed, and marks row stale
// for the scan under way.
func (l *Lanes[L, R]) Done(lane L, row R) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.busy, lane)
	if l.ended == nil {
		l.ended = map[R]bool{}
	}
	l.ended[row] = true
}
