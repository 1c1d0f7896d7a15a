package bridge

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Protecting the account: how fast the bridge sends, how
// long it shows "typing", and WhatsApp's answer that it must stop for a
// while.

// SendRate caps the attempts of one account: at most N per Per. The zero
// value sends unpaced (tests and benchmarks only: the setting always has a
// rate).
type SendRate struct {
	N   int
	Per time.Duration
}

// rateUnitNames are the units a rate is written in (settings.ParseSendRate
// reads them); another period is written out.
var rateUnitNames = map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}

// Interval is the shortest gap between two attempts; 0 when unpaced.
func (r SendRate) Interval() time.Duration {
	if r.N <= 0 {
		return 0
	}
	return r.Per / time.Duration(r.N)
}

func (r SendRate) String() string {
	if r.N <= 0 {
		return "unpaced"
	}
	unit := rateUnitNames[r.Per]
	if unit == "" {
		return fmt.Sprintf("%d/%s", r.N, r.Per)
	}
	return strconv.Itoa(r.N) + "/" + unit
}

// TypingDelay is how long "composing" shows before a text: PerChar for each
// character of the text, at most Max. The zero value is off.
type TypingDelay struct {
	PerChar time.Duration
	Max     time.Duration
}

// Off reports no typing delay.
func (d TypingDelay) Off() bool { return d.PerChar <= 0 }

// For is how long "composing" shows before text.
func (d TypingDelay) For(text string) time.Duration {
	if d.Off() {
		return 0
	}
	n := time.Duration(utf8.RuneCountInString(text))
	if n >= d.Max/d.PerChar {
		return d.Max
	}
	return n * d.PerChar
}

func (d TypingDelay) String() string {
	if d.Off() {
		return "off"
	}
	return d.PerChar.String() + "/char,max=" + d.Max.String()
}

// Restriction codes: what WhatsApp said when it refused to take a message
// because of how the account sends.
const (
	// RestrictionRateLimit: rate-overlimit (error 429), too many messages or
	// queries in a short time.
	RestrictionRateLimit = "rate_overlimit"
	// RestrictionReachout: the reach-out time lock (error 463): the account
	// may not start conversations until the lock ends.
	RestrictionReachout = "reachout_timelock"
)

// RestrictedError is a send WhatsApp refused because the account is
// restricted: sending pauses until Until, and the refused message keeps its
// retries (it did nothing wrong).
type RestrictedError struct {
	Code  string // RestrictionRateLimit or RestrictionReachout
	Until time.Time
	Err   error // WhatsApp's answer
}

func (e *RestrictedError) Error() string {
	msg := "restricted (" + e.Code + ") until " + FormatTime(e.Until)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *RestrictedError) Unwrap() error { return e.Err }

// RestrictedUntil reports whether err is a restriction, and until when.
func RestrictedUntil(err error) (time.Time, bool) {
	var r *RestrictedError
	if errors.As(err, &r) {
		return r.Until, true
	}
	return time.Time{}, false
}

// Budget is a token bucket over a rate: at most Burst actions at once,
// then one per rate interval. It paces what the bridge asks of WhatsApp on
// behalf of callers (number checks), where a flood must be refused, not
// queued. The clock is passed in, so it does no I/O.
type Budget struct {
	interval time.Duration
	burst    float64

	mu     sync.Mutex
	tokens float64 // may go below 0: tokens reserved by callers that wait
	at     time.Time
}

// NewBudget allows burst actions at once and one per rate's interval after.
func NewBudget(rate SendRate, burst int) *Budget {
	return &Budget{interval: rate.Interval(), burst: float64(burst), tokens: float64(burst)}
}

// Reserve takes a token at now when one is due within maxWait: ok, and how
// long the caller must wait before it acts. Otherwise nothing is taken and
// wait is how long until a token is due.
func (b *Budget) Reserve(now time.Time, maxWait time.Duration) (wait time.Duration, ok bool) {
	return b.ReserveN(now, 1, maxWait)
}

// ReserveN is Reserve for an action that costs n tokens (n at most the
// burst, or it could never be taken at once).
func (b *Budget) ReserveN(now time.Time, n int, maxWait time.Duration) (wait time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.at.IsZero() {
		b.at = now
	}
	if b.interval > 0 && now.After(b.at) {
		b.tokens = min(b.burst, b.tokens+float64(now.Sub(b.at))/float64(b.interval))
	}
	b.at = now
	cost := float64(n)
	if b.tokens >= cost || b.interval <= 0 {
		b.tokens -= cost
		return 0, true
	}
	wait = time.Duration((cost - b.tokens) * float64(b.interval))
	if wait > maxWait {
		return wait, false
	}
	b.tokens -= cost
	return wait, true
}

// RetryAfter is the cause of a KindRateLimited error that knows when to
// come back; transports answer it with their retry hint (Retry-After).
type RetryAfter time.Duration

func (r RetryAfter) Error() string { return "retry after " + time.Duration(r).String() }

// RetryAfterOf is the wait err carries, if any.
func RetryAfterOf(err error) (time.Duration, bool) {
	var ra RetryAfter
	if errors.As(err, &ra) {
		return time.Duration(ra), true
	}
	return 0, false
}
