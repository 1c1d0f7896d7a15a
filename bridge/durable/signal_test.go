package durable_test

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/durable"
)

// NotifyDue wakes a sleeping loop only for a row due before it looks by
// itself; an awake loop is always woken, since it may have read the table
// before the row's commit.
func TestNotifyDueSparesASleepingLoop(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		name   string
		asleep bool
		due    time.Duration // from now; the loop sleeps until now+1m
		wake   bool
	}{
		{"awake", false, time.Hour, true},
		{"due before the loop looks", true, time.Second, true},
		{"due after the loop looks", true, time.Hour, false},
		{"due when the loop looks", true, time.Minute, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := durable.NewSignal()
			if c.asleep {
				s.SleepingUntil(now.Add(time.Minute))
			}
			s.NotifyDue(now.Add(c.due))
			if s.Pending() != c.wake {
				t.Errorf("woken: %v, want %v", s.Pending(), c.wake)
			}
		})
	}
}

// The loop publishes its sleep while it sleeps and takes it back on waking.
func TestLoopPublishesItsSleep(t *testing.T) {
	clock := newManualClock()
	wake := durable.NewSignal()
	slept := make(chan time.Duration, 1)
	ctx := t.Context()
	go durable.Loop{
		Pass:     func(ctx context.Context) durable.Pass { return durable.Pass{} },
		NextDue:  func(ctx context.Context) (time.Time, bool) { return time.Time{}, false },
		Wake:     wake,
		MaxIdle:  time.Minute,
		Clock:    clock,
		Sleeping: func(d time.Duration) { slept <- d },
	}.Run(ctx)
	<-slept // published before the hook runs
	if !wake.Sleeping() {
		t.Fatal("the loop sleeps without saying until when")
	}
	wake.NotifyDue(clock.Now().Add(time.Hour)) // after it looks: no wake
	if wake.Pending() {
		t.Fatal("a row due after the loop's own wake-up woke it")
	}
	wake.NotifyDue(clock.Now())
	<-slept // it woke, passed and sleeps again
}
