package webhook

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge/durable"
)

// Retry policy defaults.
const (
	baseDelay = time.Second
	maxDelay  = 10 * time.Minute
	// maxRetryAfter bounds a receiver's Retry-After: a typo of a year must
	// not park the event beyond its retry window without a single try.
	maxRetryAfter = time.Hour
)

// backoff is the delay before the retry that follows failed attempt
// number attempts (1 = the first): exponential from baseDelay, capped at
// maxDelay, with full jitter.
var backoff = durable.Backoff{Base: baseDelay, Max: maxDelay}.Delay

// retryDelay is the delay before the attempt that follows failed attempt
// number attempts: the larger of the backoff and the receiver's
// Retry-After, when it gave one, and at least baseDelay. A Retry-After
// only ever lengthens the wait: one of 0 replacing the backoff made an
// event retry every second for ever. retryAfter bounds it above.
func retryDelay(attempts int, r01 float64, status int, retryAfterHeader string, now time.Time) time.Duration {
	d := backoff(attempts, r01)
	if ra, ok := retryAfter(status, retryAfterHeader, now); ok {
		d = max(d, ra, baseDelay)
	}
	return d
}

func jitter() float64 { return rand.Float64() } //nolint:gosec // jitter, not a secret

// retryAfter reads a 429 or 503 answer's Retry-After (delay-seconds or an
// HTTP date) as a delay from now; ok is false when absent, malformed or for
// another status. The delay is clamped to [0, maxRetryAfter].
func retryAfter(status int, value string, now time.Time) (time.Duration, bool) {
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return 0, false
	}
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	var d time.Duration
	if secs, err := strconv.ParseUint(value, 10, 64); err == nil {
		d = maxRetryAfter
		if secs < uint64(maxRetryAfter/time.Second) {
			d = time.Duration(secs) * time.Second
		}
	} else if at, err := http.ParseTime(value); err == nil {
		d = at.Sub(now)
	} else {
		return 0, false
	}
	return min(max(d, 0), maxRetryAfter), true
}
