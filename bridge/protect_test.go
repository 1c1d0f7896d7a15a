package bridge

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The delay grows with the text's characters (not bytes) up to the cap.
func TestTypingDelayFor(t *testing.T) {
	d := TypingDelay{PerChar: 50 * time.Millisecond, Max: time.Second}
	for _, tc := range []struct {
		text string
		want time.Duration
	}{
		{"", 0}, {"hi", 100 * time.Millisecond}, {"äöü", 150 * time.Millisecond},
		{strings.Repeat("x", 20), time.Second}, {strings.Repeat("x", 10000), time.Second},
	} {
		if got := d.For(tc.text); got != tc.want {
			t.Errorf("For(%d runes) = %s, want %s", len([]rune(tc.text)), got, tc.want)
		}
	}
	if (TypingDelay{}).For("hello") != 0 {
		t.Error("off delays")
	}
}

func TestRestrictedUntil(t *testing.T) {
	until := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	err := fmt.Errorf("send: %w", &RestrictedError{Code: RestrictionReachout, Until: until, Err: errors.New("server returned error 463")})
	if got, ok := RestrictedUntil(err); !ok || !got.Equal(until) {
		t.Errorf("RestrictedUntil = %s, %v", got, ok)
	}
	if _, ok := RestrictedUntil(errors.New("timeout")); ok {
		t.Error("an ordinary error is a restriction")
	}
	if !strings.Contains(err.Error(), "reachout_timelock") || !strings.Contains(err.Error(), "2026-11-21T10:00:00.000Z") {
		t.Errorf("message %q", err)
	}
}

// A budget of 2 at once and 1 a second: the burst, then one a second; a
// caller that may wait reserves the next token, and the one after it
// waits longer.
func TestBudget(t *testing.T) {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	b := NewBudget(SendRate{N: 1, Per: time.Second}, 2)
	for i, step := range []struct {
		at      time.Duration
		maxWait time.Duration
		wait    time.Duration
		ok      bool
	}{
		{0, 0, 0, true},
		{0, 0, 0, true},
		{0, 0, time.Second, false},
		{500 * time.Millisecond, 0, 500 * time.Millisecond, false},
		{500 * time.Millisecond, time.Second, 500 * time.Millisecond, true},
		{500 * time.Millisecond, time.Second, 1500 * time.Millisecond, false},
		{time.Second, time.Second, time.Second, true},
		{5 * time.Second, 0, 0, true},
		{5 * time.Second, 0, 0, true},
		{5 * time.Second, 0, time.Second, false},
	} {
		wait, ok := b.Reserve(start.Add(step.at), step.maxWait)
		if wait != step.wait || ok != step.ok {
			t.Errorf("step %d at %s: wait %s ok %v, want %s %v", i, step.at, wait, ok, step.wait, step.ok)
		}
	}
	if wait, ok := RetryAfterOf(fmt.Errorf("wrapped: %w", &Error{Kind: KindRateLimited, Err: RetryAfter(3 * time.Second)})); !ok || wait != 3*time.Second {
		t.Errorf("RetryAfterOf: %s %v", wait, ok)
	}
}
