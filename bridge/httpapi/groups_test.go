package httpapi

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
	rate, err := bridge.ParseSendRate("4/m")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	p := newGroupPace(rate, func() time.Time { return now })
	ctx := context.Background()
	if err := p.admit(ctx, 5); err != nil {
		t.Fatalf("the burst: %v", err)
	}
	err = p.admit(ctx, 3)
	if wait, ok := bridge.RetryAfterOf(err); !ok || wait != 45*time.Second || bridge.ErrorOf(err).Code != "group_action_rate_limited" {
		t.Fatalf("beyond the burst: %v", err)
	}
	now = now.Add(15 * time.Second) // one token back
	if err := p.admit(ctx, 1); err != nil {
		t.Fatalf("after an interval: %v", err)
	}
	// A refused request took nothing: 30 s later two tokens are there.
	now = now.Add(30 * time.Second)
	if err := p.admit(ctx, 2); err != nil {
		t.Fatalf("two after two intervals: %v", err)
	}
}
