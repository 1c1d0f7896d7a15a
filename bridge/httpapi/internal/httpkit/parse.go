package httpkit

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/logging"
)

func InvalidQuery(message string) error {
	return bridge.Invalid(bridge.CodeInvalidQuery, "%s", message)
}

// StrictQuery returns the query's parameters, each of which must be one of
// allowed and appear at most once. Anything else is refused rather than
// ignored: a typo (?level=info&dat=…) must not act on a default.
func StrictQuery(r *http.Request, allowed ...string) (map[string]string, error) {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, InvalidQuery("the query string is malformed")
	}
	out := make(map[string]string, len(values))
	for name, vs := range values {
		known := false
		for _, a := range allowed {
			known = known || name == a
		}
		if !known {
			return nil, InvalidQuery("unknown query parameter " + strconv.Quote(name))
		}
		if len(vs) != 1 {
			return nil, InvalidQuery("query parameter " + strconv.Quote(name) + " is repeated")
		}
		out[name] = vs[0]
	}
	return out, nil
}

// ParseDate accepts exactly YYYY-MM-DD naming a real calendar date
// (2026-02-30 is refused). The date becomes part of a file name, so only
// digits and the two dashes pass, whatever time.Parse would tolerate.
func ParseDate(s string) (time.Time, error) {
	bad := bridge.Invalid(bridge.CodeInvalidDate, "date must be a calendar date YYYY-MM-DD")
	if len(s) != len(time.DateOnly) {
		return time.Time{}, bad
	}
	for i := range len(s) {
		if i == 4 || i == 7 {
			if s[i] != '-' {
				return time.Time{}, bad
			}
		} else if s[i] < '0' || s[i] > '9' {
			return time.Time{}, bad
		}
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, bad
	}
	return d, nil
}

// ParseLevel accepts exactly debug, info, warn or error.
func ParseLevel(s string) (logging.Level, error) {
	l, err := logging.ParseLevel(s)
	if err != nil {
		return 0, bridge.Invalid(bridge.CodeInvalidLevel, "level must be one of debug, info, warn, error")
	}
	return l, nil
}

// Bounds of ?days= on the delivery analytics.
const (
	defaultDays = 7
	maxDays     = 366
)

// ParseDays accepts a decimal number of days from 1 to 366 in its plain
// form (no sign, no leading zero); absent means 7.
func ParseDays(s string, present bool) (int, error) {
	if !present {
		return defaultDays, nil
	}
	n, err := canonicalPositive(s)
	if err != nil || n > maxDays {
		return 0, bridge.Invalid(bridge.CodeInvalidDays, "days must be a whole number from 1 to 366")
	}
	return int(n), nil
}

var errNotCanonical = errors.New("not a plain positive number")

// canonicalPositive parses s when it is only ASCII digits without a leading
// zero, fits an int64 and is above zero. strconv alone would also take
// "+5" and "007".
func canonicalPositive(s string) (int64, error) {
	if s == "" || s[0] == '0' {
		return 0, errNotCanonical
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, errNotCanonical
		}
	}
	return strconv.ParseInt(s, 10, 64)
}
