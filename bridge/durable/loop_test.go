package durable_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/durable"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

const (
	maxIdle = time.Minute
	// wait bounds how long a test waits for a reported event; it is never
	// waited out when the engine works.
	wait = 10 * time.Second
)

// loopUnderTest runs a Loop on a manual clock and reports each pass and
// each sleep's bound.
type loopUnderTest struct {
	clock   *manualClock
	wake    *durable.Signal
	passes  chan int
	sleeps  chan time.Duration
	nextDue atomic.Pointer[time.Time]
	n       atomic.Int32
	run     func()
}

// newLoop makes a Loop whose passes answer pass(l, n) for pass number n;
// run starts it.
func newLoop(t *testing.T, pass func(l *loopUnderTest, n int) durable.Pass, committed func(context.Context)) *loopUnderTest {
	t.Helper()
	l := &loopUnderTest{clock: newManualClock(), wake: durable.NewSignal(), passes: make(chan int, 100),
		sleeps: make(chan time.Duration, 100)}
	loop := durable.Loop{
		Pass: func(context.Context) durable.Pass {
			n := int(l.n.Add(1))
			report(l.passes, n)
			return pass(l, n)
		},
		NextDue: func(context.Context) (time.Time, bool) {
			if at := l.nextDue.Load(); at != nil {
				return *at, true
			}
			return time.Time{}, false
		},
		Wake: l.wake, MaxIdle: maxIdle, Clock: l.clock, Committed: committed,
		Sleeping: func(d time.Duration) { report(l.sleeps, d) },
	}
	l.run = func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); loop.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	return l
}

// startLoop is newLoop, run at once.
func startLoop(t *testing.T, pass func(l *loopUnderTest, n int) durable.Pass, committed func(context.Context)) *loopUnderTest {
	t.Helper()
	l := newLoop(t, pass, committed)
	l.run()
	return l
}

// report sends v unless ch is full: a loop that spins (as one with a due
// row and nothing to hold it should) must not block on its reports.
func report[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
	}
}

func (l *loopUnderTest) dueIn(d time.Duration) {
	at := l.clock.Now().Add(d)
	l.nextDue.Store(&at)
}

func (l *loopUnderTest) expectPass(t *testing.T, n int) {
	t.Helper()
	testutil.Receive(t, wait, l.passes, func(got int) bool { return got == n }, "pass %d", n)
}

func (l *loopUnderTest) expectSleep(t *testing.T, d time.Duration) {
	t.Helper()
	got := testutil.Receive(t, wait, l.sleeps, func(time.Duration) bool { return true }, "a sleep")
	if got != d {
		t.Fatalf("the loop sleeps %v, want %v", got, d)
	}
}

// expectNoPass checks that no pass happened; called once the loop is
// known to sleep, so nothing can start one but the test.
func (l *loopUnderTest) expectNoPass(t *testing.T) {
	t.Helper()
	select {
	case n := <-l.passes:
		t.Fatalf("pass %d ran while the loop should sleep", n)
	default:
	}
}

func idle(*loopUnderTest, int) durable.Pass { return durable.Pass{} }

func TestNothingDueSleepsMaxIdle(t *testing.T) {
	l := startLoop(t, idle, nil)
	l.expectPass(t, 1)
	l.expectSleep(t, maxIdle)
	l.expectNoPass(t)
	l.clock.Advance(maxIdle)
	l.expectPass(t, 2)
}

// Wake on insert: a Notify starts a pass at once, long before MaxIdle.
func TestWakeStartsAPass(t *testing.T) {
	l := startLoop(t, idle, nil)
	l.expectPass(t, 1)
	l.expectSleep(t, maxIdle)
	l.wake.Notify()
	l.expectPass(t, 2)
}

// A wake that arrives while a pass runs is not lost: the next sleep ends
// at once.
func TestWakeDuringAPassIsKept(t *testing.T) {
	l := startLoop(t, func(l *loopUnderTest, n int) durable.Pass {
		if n == 1 {
			l.wake.Notify()
		}
		return durable.Pass{}
	}, nil)
	l.expectPass(t, 1)
	l.expectPass(t, 2)
}

// Due times: the loop sleeps until the next row is due, not MaxIdle.
func TestSleepsUntilTheNextDueTime(t *testing.T) {
	l := newLoop(t, idle, nil)
	l.dueIn(5 * time.Second)
	l.run()
	l.expectPass(t, 1)
	l.expectSleep(t, 5*time.Second)
	l.clock.Advance(4 * time.Second)
	l.expectNoPass(t)
	l.clock.Advance(time.Second)
	l.expectPass(t, 2)
}

// A due time beyond MaxIdle is looked at again after MaxIdle.
func TestSleepIsBoundedByMaxIdle(t *testing.T) {
	l := newLoop(t, idle, nil)
	l.dueIn(time.Hour)
	l.run()
	l.expectPass(t, 1)
	l.expectSleep(t, maxIdle)
}

// A full page: the next pass starts at once, without a sleep.
func TestFullPagePassesAgainAtOnce(t *testing.T) {
	l := startLoop(t, func(_ *loopUnderTest, n int) durable.Pass { return durable.Pass{More: n < 3} }, nil)
	l.expectPass(t, 1)
	l.expectPass(t, 2)
	l.expectPass(t, 3)
	l.expectSleep(t, maxIdle)
}

// The race fixed in the send queue ("no spin while a due head is attempted
// in a request"): a due row that another claimant holds stays due, and a
// loop that slept 0 for it spun on it. It sleeps until woken instead.
func TestHeldDueRowSleepsUntilWoken(t *testing.T) {
	var held atomic.Bool
	held.Store(true)
	l := newLoop(t, func(*loopUnderTest, int) durable.Pass { return durable.Pass{Held: held.Load()} }, nil)
	l.dueIn(0)
	l.run()
	l.expectPass(t, 1)
	l.expectSleep(t, maxIdle)
	l.expectNoPass(t)
	held.Store(false) // the claimant ends and notifies
	l.wake.Notify()
	l.expectPass(t, 2)
	l.expectSleep(t, 0) // due and not held: no sleep at all
}

// The race fixed in the webhook outbox and the media downloader: a wake
// sent from inside a transaction started a pass that read the table before
// the row committed, and the row waited for MaxIdle. After a wake the loop
// waits for Committed before it passes.
func TestWakeWaitsForTheCommit(t *testing.T) {
	commit := make(chan struct{})
	entered := make(chan struct{}, 1)
	l := startLoop(t, idle, func(context.Context) {
		entered <- struct{}{}
		<-commit
	})
	l.expectPass(t, 1)
	l.expectSleep(t, maxIdle)
	l.wake.Notify()
	testutil.Receive(t, wait, entered, func(struct{}) bool { return true }, "Committed called")
	l.expectNoPass(t)
	close(commit)
	l.expectPass(t, 2)
}

func TestEveryRunsAtOnceThenEachPeriod(t *testing.T) {
	clock := newManualClock()
	runs := make(chan int, 10)
	n := 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		durable.Every(ctx, clock, time.Hour, func(context.Context) { n++; runs <- n })
	}()
	defer func() { cancel(); <-done }()
	testutil.Receive(t, wait, runs, func(got int) bool { return got == 1 }, "the first run")
	// The timer is set after the run; advance until the second run comes.
	testutil.Eventually(t, wait, func() bool {
		clock.Advance(time.Hour)
		select {
		case got := <-runs:
			return got == 2
		default:
			return false
		}
	}, "the second run")
}
