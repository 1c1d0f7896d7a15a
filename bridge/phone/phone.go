// Package phone normalises the recipient numbers that clients send: phone
// numbers in international form, or WhatsApp group JIDs.
package phone

import (
	"errors"
	"strings"
)

// E.164 numbers have at most 15 digits; below 7 no country's numbering plan
// gives a reachable subscriber.
const (
	minDigits = 7
	maxDigits = 15
)

// ErrInvalid explains the accepted forms; the API uses it as the message of
// its invalid_number error.
var ErrInvalid = errors.New("number must be digits with country code or a group JID <id>@g.us")

// Normalize returns the digits of a phone number given with its country code.
// An optional leading '+' and spaces and dashes between digits are removed
// ("+49 151-1234 5678" -> "4915112345678"); anything else is invalid.
func Normalize(number string) (string, error) {
	s := strings.TrimSpace(number)
	s = strings.TrimPrefix(s, "+")
	var b strings.Builder
	b.Grow(len(s))
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			b.WriteRune(c)
		case c == ' ' || c == '-':
		default:
			return "", ErrInvalid
		}
	}
	digits := b.String()
	if len(digits) < minDigits || len(digits) > maxDigits || digits[0] == '0' {
		return "", ErrInvalid
	}
	return digits, nil
}

// groupServer is the JID server of WhatsApp groups.
const groupServer = "@g.us"

// NormalizeGroup accepts a group JID "<id>@g.us", where id is digits,
// optionally two digit runs joined by a dash (the legacy creator-timestamp
// form), and returns it unchanged.
func NormalizeGroup(jid string) (string, error) {
	id, ok := strings.CutSuffix(jid, groupServer)
	if !ok || id == "" || len(id) > 64 {
		return "", ErrInvalid
	}
	parts := strings.Split(id, "-")
	if len(parts) > 2 {
		return "", ErrInvalid
	}
	for _, p := range parts {
		if p == "" || strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
			return "", ErrInvalid
		}
	}
	return jid, nil
}
