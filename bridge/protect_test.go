package bridge

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseSendRate(t *testing.T) {
	for _, tc := range []struct {
		text     string
		interval time.Duration
		err      string
	}{
		{"20/m", 3 * time.Second, ""},
		{"1/h", time.Hour, ""},
		{"5/s", 200 * time.Millisecond, ""},
		{"100000/s", 10 * time.Microsecond, ""},
		{"", 0, "is not a rate"},
		{"20", 0, "is not a rate"},
		{"20/", 0, "is not a rate"},
		{"/m", 0, "is not a rate"},
		{"20/d", 0, "is not a rate"},
		{"20/M", 0, "is not a rate"},
		{"-1/s", 0, "is not a rate"},
		{"1.5/s", 0, "is not a rate"},
		{"0/s", 0, "is not a rate"},
		{"007/s", 0, "is not a rate"},
		{"20/m ", 0, "is not a rate"},
		{"1/s/s", 0, "is not a rate"},
		{"100001/s", 0, "count must be from 1 to 100000"},
		{"9999999999/s", 0, "is not a rate"},
	} {
		r, err := ParseSendRate(tc.text)
		switch {
		case tc.err == "" && (err != nil || r.Interval() != tc.interval || r.String() != tc.text):
			t.Errorf("ParseSendRate(%q) = %v (every %s), %v; want every %s", tc.text, r, r.Interval(), err, tc.interval)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseSendRate(%q) error %v, want %q", tc.text, err, tc.err)
		}
	}
	if (SendRate{}).Interval() != 0 || (SendRate{}).String() != "unpaced" {
		t.Error("the zero rate is not unpaced")
	}
}

func TestParseTypingDelay(t *testing.T) {
	for _, tc := range []struct {
		text string
		want TypingDelay
		err  string
	}{
		{"", TypingDelay{}, ""},
		{"off", TypingDelay{}, ""},
		{"50ms/char", TypingDelay{50 * time.Millisecond, 5 * time.Second}, ""},
		{"40ms/char,max=8s", TypingDelay{40 * time.Millisecond, 8 * time.Second}, ""},
		{"1ms/char,max=1ms", TypingDelay{time.Millisecond, time.Millisecond}, ""},
		{"OFF", TypingDelay{}, "is not a typing delay"},
		{"50ms", TypingDelay{}, "is not a typing delay"},
		{"50ms/word", TypingDelay{}, "is not a typing delay"},
		{"fast/char", TypingDelay{}, "time per character"},
		{"500us/char", TypingDelay{}, "time per character"},
		{"50ms/char,", TypingDelay{}, "max= must be"},
		{"50ms/char,max=", TypingDelay{}, "max= must be"},
		{"50ms/char,max=61s", TypingDelay{}, "max= must be"},
		{"50ms/char,cap=5s", TypingDelay{}, "max= must be"},
		{"50ms/char,max=5s,max=6s", TypingDelay{}, "max= must be"},
	} {
		d, err := ParseTypingDelay(tc.text)
		switch {
		case tc.err == "" && (err != nil || d != tc.want):
			t.Errorf("ParseTypingDelay(%q) = %+v, %v; want %+v", tc.text, d, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseTypingDelay(%q) error %v, want %q", tc.text, err, tc.err)
		}
	}
}

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

// Settings text is untrusted: the parsers never panic and what they accept
// is within bounds and prints back as a rate they accept.
func FuzzParseSendRate(f *testing.F) {
	for _, s := range []string{"20/m", "1/h", "100000/s", "0/s", "1/", "/", "", "9/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseSendRate(text)
		if err != nil {
			return
		}
		if iv := r.Interval(); iv < minSendInterval || iv > maxSendInterval {
			t.Fatalf("%q accepted with interval %s", text, iv)
		}
		if again, err := ParseSendRate(r.String()); err != nil || again != r {
			t.Fatalf("%q -> %s does not parse back: %v", text, r, err)
		}
	})
}

func FuzzParseTypingDelay(f *testing.F) {
	for _, s := range []string{"off", "50ms/char", "40ms/char,max=8s", "1h/char", ",max=", "/char"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		d, err := ParseTypingDelay(text)
		if err != nil || d.Off() {
			return
		}
		if d.PerChar < minTypingPerChar || d.PerChar > maxTypingPerChar || d.Max < d.PerChar || d.Max > maxTypingCap {
			t.Fatalf("%q accepted as %+v", text, d)
		}
		if again, err := ParseTypingDelay(d.String()); err != nil || again != d {
			t.Fatalf("%q -> %s does not parse back: %v", text, d, err)
		}
	})
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
