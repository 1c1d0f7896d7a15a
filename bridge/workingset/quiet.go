package workingset

import (
	"context"
	"runtime"
	"time"
)

// Quiet decides when an idle bridge gives its executable's pages back
// again. A trim after start-up and after each connect leaves the pages that
// idle running then touches: the heartbeats, keepalives and periodic sweeps,
// and each garbage collection, which reads the stack maps and type data of
// what it scans (about 3 MiB of the tables for an idle linked bridge). The
// kernel maps 64 KiB of the file around each page touched, so over minutes
// the idle bridge maps again most of what it gave back. Trimming again once a
// period has passed keeps mapped what the last period used, and trimming just
// after a collection drops what only the next collection reads again. A busy
// bridge is left alone: it would map its pages back at once and pay the
// faults for nothing.
type Quiet struct {
	// After is the period: how long after the last trim (or the last look
	// that found the bridge busy) to look again.
	After time.Duration
	// AfterCollection is how long a period must have lasted for a garbage
	// collection to end it early, so that collections in quick succession
	// do not trim each time.
	AfterCollection time.Duration
	// MaxBusy is the share of one CPU the process may have used over the
	// period and still count as quiet.
	MaxBusy float64
}

// Due reports whether to trim now, elapsed after the period began, with cpu
// the process's CPU time over it; collected says a garbage collection has
// just ended.
func (q Quiet) Due(elapsed, cpu time.Duration, collected bool) bool {
	least := q.After
	if collected {
		least = q.AfterCollection
	}
	return elapsed >= least && float64(cpu) <= q.MaxBusy*float64(elapsed)
}

// Collections signals on the channel after each garbage collection (at most
// one signal waits), until ctx ends. A collection runs the cleanup of a
// marker that nothing references, which arms the next marker.
func Collections(ctx context.Context) <-chan struct{} {
	collected := make(chan struct{}, 1)
	var arm func()
	arm = func() {
		marker := &struct{ _ *byte }{} // holds a pointer: never a tiny allocation
		runtime.AddCleanup(marker, func(struct{}) {
			if ctx.Err() != nil {
				return
			}
			select {
			case collected <- struct{}{}:
			default:
			}
			arm()
		}, struct{}{})
	}
	arm()
	return collected
}
