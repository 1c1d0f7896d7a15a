package guard

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Each row is one call on a Failures of max 3 per minute, at a time
// relative to the start.
func TestFailuresBlockAndExpire(t *testing.T) {
	type step struct {
		at   time.Duration
		do   string // "try" (an attempt) or "reset" (a success)
		key  string
		ok   bool          // try: allowed
		last bool          // try: this attempt locks if it fails
		left time.Duration // try: when refused, for how long
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"under the limit", []step{
			{at: 0, do: "try", key: "a", ok: true},
			{at: time.Second, do: "try", key: "a", ok: true},
		}},
		{"the limit blocks for the period from the last failure", []step{
			{at: 0, do: "try", key: "a", ok: true},
			{at: 10 * time.Second, do: "try", key: "a", ok: true},
			{at: 20 * time.Second, do: "try", key: "a", ok: true, last: true},
			{at: 30 * time.Second, do: "try", key: "a", left: 50 * time.Second},
			{at: 79 * time.Second, do: "try", key: "a", left: time.Second},
			{at: 80 * time.Second, do: "try", key: "a", ok: true},
		}},
		{"keys are separate", []step{
			{at: 0, do: "try", key: "a", ok: true},
			{at: 0, do: "try", key: "a", ok: true},
			{at: 0, do: "try", key: "a", ok: true, last: true},
			{at: 0, do: "try", key: "b", ok: true},
			{at: 0, do: "try", key: "a", left: time.Minute},
		}},
		{"Failures older than the period are forgotten", []step{
			{at: 0, do: "try", key: "a", ok: true},
			{at: 10 * time.Second, do: "try", key: "a", ok: true},
			{at: 61 * time.Second, do: "try", key: "a", ok: true},
			{at: 62 * time.Second, do: "try", key: "a", ok: true},
		}},
		{"a success resets", []step{
			{at: 0, do: "try", key: "a", ok: true},
			{at: 0, do: "try", key: "a", ok: true},
			{at: 0, do: "reset", key: "a"},
			{at: 0, do: "try", key: "a", ok: true},
			{at: 0, do: "try", key: "a", ok: true},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Unix(1_700_000_000, 0)
			now := start
			f := NewFailures(3, time.Minute, func() time.Time { return now })
			for i, s := range c.steps {
				now = start.Add(s.at)
				if s.do == "reset" {
					f.Reset(s.key)
					continue
				}
				ok, left, last := f.Attempt(s.key)
				if ok != s.ok || last != s.last || left != s.left {
					t.Errorf("step %d: attempt = %v, %v, last %v; want %v, %v, last %v", i, ok, left, last, s.ok, s.left, s.last)
				}
			}
		})
	}
}

// However many attempts race, exactly max are allowed.
func TestFailuresAreExactUnderConcurrency(t *testing.T) {
	f := NewFailures(5, time.Minute, time.Now)
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			if ok, _, _ := f.Attempt("logout"); ok {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != 5 {
		t.Errorf("%d attempts allowed, want 5", n)
	}
}

// Keys whose period ended are swept once there are many.
func TestFailuresSweepExpiredKeys(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	f := NewFailures(5, time.Minute, func() time.Time { return now })
	for i := range sweepAbove + 1 {
		f.Attempt(fmt.Sprint("addr-", i))
	}
	now = now.Add(time.Minute)
	f.Attempt("one more")
	if len(f.m) != 1 {
		t.Errorf("%d keys kept, want only the new one", len(f.m))
	}
}
