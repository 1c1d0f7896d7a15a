package settings

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// The parsers of the settings that protect the account: how fast the
// bridge sends (SEND_RATE and the other rates) and how long it shows
// "typing" (TYPING_DELAY).

// Bounds of a send rate: a faster one is no pacing at all, a slower one
// would leave a single message waiting for hours.
const (
	maxSendRateN    = 100000
	minSendInterval = 10 * time.Microsecond
	maxSendInterval = time.Hour
)

// rateUnits are the units of a rate: N/s, N/m, N/h.
var rateUnits = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}

// ParseSendRate reads a rate in the form N/unit: 20/m, 5/s, 300/h. N is a
// whole number from 1 without sign or leading zero; unit is s, m or h.
func ParseSendRate(text string) (bridge.SendRate, error) {
	n, unit, ok := strings.Cut(text, "/")
	per, known := rateUnits[unit]
	if !ok || !known || !plainNumber(n) {
		return bridge.SendRate{}, fmt.Errorf("%q is not a rate: write N/s, N/m or N/h (for example 20/m)", text)
	}
	count, err := strconv.Atoi(n)
	if err != nil || count > maxSendRateN {
		return bridge.SendRate{}, fmt.Errorf("%q: the count must be from 1 to %d", text, maxSendRateN)
	}
	r := bridge.SendRate{N: count, Per: per}
	if iv := r.Interval(); iv < minSendInterval || iv > maxSendInterval {
		return bridge.SendRate{}, fmt.Errorf("%q: one attempt every %s; it must be from %s to %s", text, iv, minSendInterval, maxSendInterval)
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
func ParseTypingDelay(text string) (bridge.TypingDelay, error) {
	if text == "" || text == "off" {
		return bridge.TypingDelay{}, nil
	}
	perText, rest, hasCap := strings.Cut(text, ",")
	perText, ok := strings.CutSuffix(perText, "/char")
	if !ok {
		return bridge.TypingDelay{}, fmt.Errorf("%q is not a typing delay: write %s", text, typingDelaySyntaxes)
	}
	d := bridge.TypingDelay{Max: defaultTypingCap}
	var err error
	if d.PerChar, err = time.ParseDuration(perText); err != nil || d.PerChar < minTypingPerChar || d.PerChar > maxTypingPerChar {
		return bridge.TypingDelay{}, fmt.Errorf("%q: the time per character must be a duration from %s to %s", text, minTypingPerChar, maxTypingPerChar)
	}
	if hasCap {
		capText, ok := strings.CutPrefix(rest, "max=")
		if d.Max, err = time.ParseDuration(capText); !ok || err != nil || d.Max < d.PerChar || d.Max > maxTypingCap {
			return bridge.TypingDelay{}, fmt.Errorf("%q: max= must be a duration from the time per character to %s", text, maxTypingCap)
		}
	}
	return d, nil
}
