package bridge

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// Bounds of a send rate: a faster one is no pacing at all, a slower one
// would leave a single message waiting for hours.
const (
	maxSendRateN    = 100000
	minSendInterval = 10 * time.Microsecond
	maxSendInterval = time.Hour
)

var rateUnits = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}

// ParseSendRate reads a rate in the form N/unit: 20/m, 5/s, 300/h. N is a
// whole number from 1 without sign or leading zero; unit is s, m or h.
func ParseSendRate(text string) (SendRate, error) {
	n, unit, ok := strings.Cut(text, "/")
	per, known := rateUnits[unit]
	if !ok || !known || !plainNumber(n) {
		return SendRate{}, fmt.Errorf("%q is not a rate: write N/s, N/m or N/h (for example 20/m)", text)
	}
	count, err := strconv.Atoi(n)
	if err != nil || count > maxSendRateN {
		return SendRate{}, fmt.Errorf("%q: the count must be from 1 to %d", text, maxSendRateN)
	}
	r := SendRate{N: count, Per: per}
	if iv := r.Interval(); iv < minSendInterval || iv > maxSendInterval {
		return SendRate{}, fmt.Errorf("%q: one attempt every %s; it must be from %s to %s", text, iv, minSendInterval, maxSendInterval)
	}
	return r, nil
}

// plainNumber is digits only, without a leading zero.
func plainNumber(s string) bool {
	if s == "" || s[0] == '0' || len(s) > 9 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

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
	for unit, d := range rateUnits {
		if d == r.Per {
			return strconv.Itoa(r.N) + "/" + unit
		}
	}
	return fmt.Sprintf("%d/%s", r.N, r.Per)
}

// TypingDelay is how long "composing" shows before a text: PerChar for each
// character of the text, at most Max. The zero value is off.
type TypingDelay struct {
	PerChar time.Duration
	Max     time.Duration
}

// Bounds of a typing delay: a person types at least a character a second
// and no faster than a character a millisecond; a cap over a minute would
// hold the queue for little benefit.
const (
	minTypingPerChar    = time.Millisecond
	maxTypingPerChar    = time.Second
	maxTypingCap        = time.Minute
	defaultTypingCap    = 5 * time.Second
	typingDelaySyntaxes = `"off", "<duration>/char" or "<duration>/char,max=<duration>" (for example 50ms/char,max=5s)`
)

// ParseTypingDelay reads a typing delay: "" or "off" (none),
// "<duration>/char" (capped at 5 s) or "<duration>/char,max=<duration>".
func ParseTypingDelay(text string) (TypingDelay, error) {
	if text == "" || text == "off" {
		return TypingDelay{}, nil
	}
	perText, rest, hasCap := strings.Cut(text, ",")
	perText, ok := strings.CutSuffix(perText, "/char")
	if !ok {
		return TypingDelay{}, fmt.Errorf("%q is not a typing delay: write %s", text, typingDelaySyntaxes)
	}
	d := TypingDelay{Max: defaultTypingCap}
	var err error
	if d.PerChar, err = time.ParseDuration(perText); err != nil || d.PerChar < minTypingPerChar || d.PerChar > maxTypingPerChar {
		return TypingDelay{}, fmt.Errorf("%q: the time per character must be a duration from %s to %s", text, minTypingPerChar, maxTypingPerChar)
	}
	if hasCap {
		capText, ok := strings.CutPrefix(rest, "max=")
		if d.Max, err = time.ParseDuration(capText); !ok || err != nil || d.Max < d.PerChar || d.Max > maxTypingCap {
			return TypingDelay{}, fmt.Errorf("%q: max= must be a duration from the time per character to %s", text, maxTypingCap)
		}
	}
	return d, nil
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
