package main

import (
	"context"
	"sync"
	"time"

	"github.com/msgbridge/msgbridge/bridge/workingset"
)

// heapProfileRate is runtime.MemProfileRate for a bridge that serves its
// profiles (PPROF) or not. The heap profile is only served with PPROF=on,
// yet Go samples an allocation every 512 KiB for it whatever the setting:
// each sample walks its goroutine's stack through the executable's tables
// (pclntab, mapping 64 KiB of them around each frame's entry again after
// every trim) and records the stack in a 1.4 MB hash table whose touched
// pages stay resident. An idle linked bridge thus held about 1.3 MiB of that
// table and several MiB of tables two minutes after start. Without PPROF
// nothing reads the samples, so none are taken.
func heapProfileRate(pprof bool) int {
	if pprof {
		return defaultMemProfileRate
	}
	return 0
}

// defaultMemProfileRate is Go's own runtime.MemProfileRate.
const defaultMemProfileRate = 512 * 1024

// settleBeforeTrim is how long after start-up, and after the session
// connects, the bridge waits before giving back its executable's pages:
// long enough for the burst of work (migrations, the first requests, the
// link's handshake and offline messages) to have passed.
const settleBeforeTrim = 5 * time.Second

// quietTrim is when an idle bridge gives its pages back again: a minute
// after the last trim, or after a garbage collection at least 10 s after it,
// if it used at most 5 % of a CPU meanwhile (an idle linked bridge uses about
// 0.5 %; one serving requests far more). A trim costs a read of
// /proc/self/smaps and the faults that map back what the bridge then uses:
// about 2 ms.
var quietTrim = workingset.Quiet{After: time.Minute, AfterCollection: 10 * time.Second, MaxBusy: 0.05}

// trimWorkingSet gives back the executable pages that start-up and each
// connect touched (package workingset says why that loses nothing), and
// again when the bridge has been quiet for a period or after a garbage
// collection in a quiet one (workingset.Quiet).
func (a *app) trimWorkingSet(ctx context.Context) error {
	t := &trimmer{app: a}
	afterSettling := func() {
		timer := time.NewTimer(settleBeforeTrim)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		t.trim("start-up or connect")
	}
	afterSettling()
	select {
	case <-ctx.Done():
		return nil // stopping is not a failure of this part
	default:
	}
	quietDone := make(chan struct{})
	go func() {
		defer close(quietDone)
		t.trimWhenQuiet(ctx, quietTrim)
	}()
	err := a.eachConnect(ctx, afterSettling)
	<-quietDone
	return err
}

// trimmer trims and remembers when it last did, and the process's CPU time
// then, which begin the next quiet period.
type trimmer struct {
	app *app

	mu       sync.Mutex
	periodAt time.Time
	cpuAt    time.Duration
}

// trim gives the pages back and begins a new period.
func (t *trimmer) trim(why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trimLocked(why)
}

func (t *trimmer) trimLocked(why string) {
	size, err := workingset.Trim()
	t.beginPeriodLocked()
	if err != nil {
		t.app.log.Error(err, "give back the executable's pages")
		return
	}
	t.app.log.V(1).Info("gave back the executable's pages", "after", why, "mappedMiB", size>>20)
}

func (t *trimmer) beginPeriodLocked() {
	t.periodAt, t.cpuAt = time.Now(), workingset.CPUTime()
}

// trimWhenQuiet looks once a period has passed since the last trim (or
// the last look), and after each garbage collection: it trims if the bridge
// was quiet (workingset.Quiet). It returns when ctx ends.
func (t *trimmer) trimWhenQuiet(ctx context.Context, quiet workingset.Quiet) {
	collections := workingset.Collections(ctx)
	for {
		t.mu.Lock()
		wait := quiet.After - time.Since(t.periodAt)
		t.mu.Unlock()
		timer := time.NewTimer(wait)
		collected := false
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-collections:
			timer.Stop()
			collected = true
		}
		t.look(quiet, collected)
	}
}

// look trims when quiet.Due says so; a period that is over but was busy
// begins a new one. A trim after a connect may have begun a new period
// meanwhile, which is then waited for.
func (t *trimmer) look(quiet workingset.Quiet, collected bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	elapsed, cpu := time.Since(t.periodAt), workingset.CPUTime()-t.cpuAt
	switch {
	case quiet.Due(elapsed, cpu, collected):
		why := "a quiet period"
		if collected {
			why = "a garbage collection"
		}
		t.trimLocked(why)
	case elapsed >= quiet.After:
		t.beginPeriodLocked()
	}
}
