package webhook

import (
	"net/http"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		attempts int
		r01      float64
		want     time.Duration
	}{
		{1, 0, 0},
		{1, 0.5, 500 * time.Millisecond},
		{2, 0.5, time.Second},
		{4, 0.999, 7992 * time.Millisecond},
		{10, 0.5, 256 * time.Second},
		{11, 0.5, 5 * time.Minute}, // capped: 1024 s > 10 min
		{40, 0.5, 5 * time.Minute},
		{1 << 20, 0.5, 5 * time.Minute},
	} {
		if got := backoff(c.attempts, c.r01); got != c.want {
			t.Errorf("backoff(%d, %v) = %v, want %v", c.attempts, c.r01, got, c.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		status int
		value  string
		want   time.Duration
		ok     bool
	}{
		{"seconds on 429", http.StatusTooManyRequests, "30", 30 * time.Second, true},
		{"seconds on 503", http.StatusServiceUnavailable, " 5 ", 5 * time.Second, true},
		{"zero", http.StatusTooManyRequests, "0", 0, true},
		{"ignored on 500", http.StatusInternalServerError, "30", 0, false},
		{"absent", http.StatusTooManyRequests, "", 0, false},
		{"negative", http.StatusTooManyRequests, "-5", 0, false},
		{"garbage", http.StatusTooManyRequests, "soon", 0, false},
		{"overflow", http.StatusTooManyRequests, "99999999999999999999", 0, false},
		{"large clamped", http.StatusTooManyRequests, "86400", time.Hour, true},
		{"http date", http.StatusServiceUnavailable, "Sat, 21 Nov 2026 10:02:00 GMT", 2 * time.Minute, true},
		{"date in the past", http.StatusServiceUnavailable, "Sat, 21 Nov 2026 09:00:00 GMT", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := retryAfter(c.status, c.value, now)
			if got != c.want || ok != c.ok {
				t.Errorf("retryAfter(%d, %q) = %v, %v; want %v, %v", c.status, c.value, got, ok, c.want, c.ok)
			}
		})
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"30", "0", "", "Sat, 21 Nov 2026 10:02:00 GMT", "-1", "1e9", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := retryAfter(http.StatusTooManyRequests, v, now)
		if d < 0 || d > maxRetryAfter || (!ok && d != 0) {
			t.Fatalf("retryAfter(%q) = %v, %v", v, d, ok)
		}
	})
}

func TestRetryDelay(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		attempts int
		status   int
		value    string
		want     time.Duration
	}{
		{"no Retry-After: backoff", 3, http.StatusTooManyRequests, "", 2 * time.Second},
		{"500: backoff", 3, http.StatusInternalServerError, "30", 2 * time.Second},
		{"redirect: backoff", 1, http.StatusFound, "", 500 * time.Millisecond},
		{"Retry-After honoured", 3, http.StatusTooManyRequests, "30", 30 * time.Second},
		{"Retry-After below the backoff: the backoff", 10, http.StatusServiceUnavailable, "2", 256 * time.Second},
		{"Retry-After 0 after many attempts: the backoff, not a second", 12, http.StatusTooManyRequests, "0", 5 * time.Minute},
		{"Retry-After 0 floored", 1, http.StatusTooManyRequests, "0", baseDelay},
		{"date in the past floored", 1, http.StatusServiceUnavailable, "Sat, 21 Nov 2026 09:00:00 GMT", baseDelay},
		{"http date", 1, http.StatusServiceUnavailable, "Sat, 21 Nov 2026 10:02:00 GMT", 2 * time.Minute},
		{"a day capped", 1, http.StatusTooManyRequests, "86400", maxRetryAfter},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := retryDelay(c.attempts, 0.5, c.status, c.value, now); got != c.want {
				t.Errorf("retryDelay(%d, %d, %q) = %v, want %v", c.attempts, c.status, c.value, got, c.want)
			}
		})
	}
}
