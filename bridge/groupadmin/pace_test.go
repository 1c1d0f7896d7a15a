package groupadmin

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// The default pace lets a burst of five participants through at once,
// then one every 15 s; a request whose turn is over 30 s away is refused
// with the wait, and takes nothing from the budget.
func TestGroupPace(t *testing.T) {
	t.Parallel()
	rate := bridge.SendRate{N: 4, Per: time.Minute}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	p := NewPace(rate, func() time.Time { return now })
	ctx := context.Background()
	if err := p.Admit(ctx, 5); err != nil {
		t.Fatalf("the burst: %v", err)
	}
	err := p.Admit(ctx, 3)
	if wait, ok := bridge.RetryAfterOf(err); !ok || wait != 45*time.Second || bridge.ErrorOf(err).Code != "group_action_rate_limited" {
		t.Fatalf("beyond the burst: %v", err)
	}
	now = now.Add(15 * time.Second) // one token back
	if err := p.Admit(ctx, 1); err != nil {
		t.Fatalf("after an interval: %v", err)
	}
	// A refused request took nothing: 30 s later two tokens are there.
	now = now.Add(30 * time.Second)
	if err := p.Admit(ctx, 2); err != nil {
		t.Fatalf("two after two intervals: %v", err)
	}
}

// The figure in README: how many group actions an hour of demand without
// pause gets through the default pace (GROUP_ACTION_RATE=4/m, burst 5,
// each waited turn jittered), one participant each, minute by minute.
// Callers that come back as soon as they may are the worst case: a
// person's app never gets there.
func TestGroupPaceFigure(t *testing.T) {
	t.Parallel()
	rate := bridge.SendRate{N: 4, Per: time.Minute}
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	now := start
	p := NewPace(rate, func() time.Time { return now })
	p.sleep = func(_ context.Context, d time.Duration) error { now = now.Add(d); return nil }
	perMinute := make([]int, 60)
	for now.Before(start.Add(time.Hour)) {
		if err := p.Admit(context.Background(), 1); err != nil {
			t.Fatal(err) // one at a time never waits past 30 s
		}
		if m := int(now.Sub(start) / time.Minute); m < 60 {
			perMinute[m]++
		}
	}
	total := 0
	for _, n := range perMinute[1:] {
		total += n
	}
	mean := float64(total) / 59
	t.Logf("default pace: %d in the first minute, then %.2f a minute (most %d), %d an hour", perMinute[0], mean, maxOf(perMinute[1:]), total+perMinute[0])
	if perMinute[0] != 8 || mean > 4 || mean < 3.5 || maxOf(perMinute[1:]) > 4 {
		t.Errorf("per minute %v", perMinute)
	}
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
