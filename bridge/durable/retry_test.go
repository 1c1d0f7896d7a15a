package durable_test

import (
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/durable"
)

func TestScheduleIsSpentAfterItsLastDelay(t *testing.T) {
	s := durable.Schedule{time.Second, time.Minute}
	for _, c := range []struct {
		attempts int
		want     time.Duration
		ok       bool
	}{{0, 0, false}, {1, time.Second, true}, {2, time.Minute, true}, {3, 0, false}} {
		got, ok := s.After(c.attempts)
		if got != c.want || ok != c.ok {
			t.Errorf("After(%d) = %v, %v; want %v, %v", c.attempts, got, ok, c.want, c.ok)
		}
	}
}

func TestBackoffDoublesUpToItsCap(t *testing.T) {
	b := durable.Backoff{Base: time.Second, Max: 10 * time.Minute}
	for _, c := range []struct {
		attempts int
		want     time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {4, 8 * time.Second}, {10, 512 * time.Second}, {11, 10 * time.Minute}, {1000, 10 * time.Minute}} {
		// r01 just below 1 shows the ceiling; 0 is no delay at all.
		if got := b.Delay(c.attempts, 0.999999999); got < c.want*99/100 || got > c.want {
			t.Errorf("Delay(%d) at the top of the jitter = %v, want about %v", c.attempts, got, c.want)
		}
		if got := b.Delay(c.attempts, 0); got != 0 {
			t.Errorf("Delay(%d, 0) = %v, want 0 (full jitter)", c.attempts, got)
		}
	}
}
