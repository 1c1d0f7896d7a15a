package durable

import "time"

// Schedule is a fixed retry schedule: Schedule[i] is the delay before the
// retry that follows failed attempt number i+1.
type Schedule []time.Duration

// After is the delay before the attempt that follows failed attempt number
// attempts (1 = the first); ok is false when the schedule is spent and the
// row fails for good.
func (s Schedule) After(attempts int) (d time.Duration, ok bool) {
	if attempts < 1 || attempts > len(s) {
		return 0, false
	}
	return s[attempts-1], true
}

// Backoff is an exponential retry delay with full jitter: uniform in
// [0, min(Base*2^(attempts-1), Max)), so that a receiver coming back up is
// not hit by every row at once.
type Backoff struct {
	Base, Max time.Duration
}

// Delay is the delay after failed attempt number attempts (1 = the first);
// r01 is a uniform random number in [0, 1).
func (b Backoff) Delay(attempts int, r01 float64) time.Duration {
	ceiling := b.Max
	if attempts < 30 { // 2^30 Base is far beyond any Max; avoids overflow
		ceiling = min(b.Base<<max(attempts-1, 0), b.Max)
	}
	return time.Duration(r01 * float64(ceiling))
}
