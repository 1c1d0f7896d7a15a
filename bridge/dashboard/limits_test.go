package dashboard

import (
	"testing"
	"time"
)

// Each row is one call on a failures of max 3 per minute, at a time
// relative to the start; blocked rows check what blocked reports there.
func TestFailuresBlockAndExpire(t *testing.T) {
	type step struct {
		at      time.Duration
		do      string // "fail", "reset" or "check"
		key     string
		blocked bool          // for check
		left    time.Duration // for check, when blocked
		reached bool          // for fail: this failure hit the limit
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"under the limit", []step{
			{at: 0, do: "fail", key: "a"},
			{at: time.Second, do: "fail", key: "a"},
			{at: 2 * time.Second, do: "check", key: "a"},
		}},
		{"the limit blocks for the period from the last failure", []step{
			{at: 0, do: "fail", key: "a"},
			{at: 10 * time.Second, do: "fail", key: "a"},
			{at: 20 * time.Second, do: "fail", key: "a", reached: true},
			{at: 30 * time.Second, do: "check", key: "a", blocked: true, left: 50 * time.Second},
			{at: 79 * time.Second, do: "check", key: "a", blocked: true, left: time.Second},
			{at: 80 * time.Second, do: "check", key: "a"},
		}},
		{"keys are separate", []step{
			{at: 0, do: "fail", key: "a"},
			{at: 0, do: "fail", key: "a"},
			{at: 0, do: "fail", key: "a", reached: true},
			{at: 0, do: "check", key: "b"},
			{at: 0, do: "check", key: "a", blocked: true, left: time.Minute},
		}},
		{"failures older than the period are forgotten", []step{
			{at: 0, do: "fail", key: "a"},
			{at: 10 * time.Second, do: "fail", key: "a"},
			{at: 61 * time.Second, do: "fail", key: "a"},
			{at: 62 * time.Second, do: "check", key: "a"},
		}},
		{"a success resets", []step{
			{at: 0, do: "fail", key: "a"},
			{at: 0, do: "fail", key: "a"},
			{at: 0, do: "reset", key: "a"},
			{at: 0, do: "fail", key: "a"},
			{at: 0, do: "check", key: "a"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Unix(1_700_000_000, 0)
			now := start
			f := newFailures(3, time.Minute, func() time.Time { return now })
			for i, s := range c.steps {
				now = start.Add(s.at)
				switch s.do {
				case "fail":
					if got := f.fail(s.key); got != s.reached {
						t.Errorf("step %d: fail reached the limit=%v, want %v", i, got, s.reached)
					}
				case "reset":
					f.reset(s.key)
				case "check":
					blocked, left := f.blocked(s.key)
					if blocked != s.blocked || (blocked && left != s.left) {
						t.Errorf("step %d: blocked=%v for %v, want %v for %v", i, blocked, left, s.blocked, s.left)
					}
				}
			}
		})
	}
}
