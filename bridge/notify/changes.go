// Package notify tells subscribers that something changed, never what
// (Changes): the session its status and QR code, the wiring the dashboard
// its traffic.
package notify

import "sync"

// Changes tells subscribers that something changed, never what: each
// subscriber's channel has room for one signal and a notification never
// blocks, so a slow reader sees one pending signal for any number of
// changes and must re-read what it shows on each, never count them. The one
// who notifies (whatsmeow's event goroutine, a commit) never waits for a
// reader. The zero value is ready.
type Changes struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

// Subscribe returns the channel that receives a signal after every change,
// and the function that ends the subscription.
func (c *Changes) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	if c.subs == nil {
		c.subs = map[chan struct{}]struct{}{}
	}
	c.subs[ch] = struct{}{}
	c.mu.Unlock()
	return ch, func() {
		c.mu.Lock()
		delete(c.subs, ch)
		c.mu.Unlock()
	}
}

// Notify signals every subscriber without blocking.
func (c *Changes) Notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default: // a signal is already pending
		}
	}
}
