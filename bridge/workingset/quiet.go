package workingset

import "time"

// Quiet decides when an idle bridge gives its executable's pages back
// again. A trim after start-up and after each connect leaves the pages that
// idle running then touches: the heartbeats, keepalives and periodic sweeps,
// and each garbage collection, which reads the type data and stack maps of
// what it scans. The kernel maps 64 KiB of the file around each page touched,
// so over minutes the idle bridge maps again most of what it gave back.
// Trimming again once a period has passed keeps the pages mapped to what the
// last period used; a busy bridge is left alone, since it would map its pages
// back at once and pay the faults for nothing.
type Quiet struct {
	// After is the period: how long after the last trim (or the last look
	// that found the bridge busy) to look again.
	After time.Duration
	// MaxBusy is the share of one CPU the process may have used over the
	// period and still count as quiet.
	MaxBusy float64
}

// Due reports whether to trim now, elapsed after the period began, with cpu
// the process's CPU time over it.
func (q Quiet) Due(elapsed, cpu time.Duration) bool {
	return elapsed >= q.After && float64(cpu) <= q.MaxBusy*float64(elapsed)
}
