// Package apikeys keeps the bridge's scoped API keys: named, with scopes,
// an optional allowlist of chats, an optional hourly send budget, an
// optional expiry and an approval flag. Their secrets are random 32-byte
// keys, shown once at creation and stored only as their SHA-256; every
// door asks Keys.Authenticate who is calling, so a key is checked the
// same way whichever door it comes in by, and a revocation holds at the
// next request.
package apikeys

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Limits of a key's fields.
const (
	maxNameLen = 63
	// MaxChats bounds a key's allowlist: an assistant is given a few
	// chats, never the address book.
	MaxChats = 256
	// MaxBudget is the most messages per hour a budget may allow; a
	// budget is meant to be below the account's pace.
	MaxBudget = 100000
)

// namePattern: a key's name is what the audit log and the dashboard show,
// so it is plain: lower-case letters, digits, '-', '_' and '.'.
var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// Request is a key as the admin API or the resource names it, not yet
// validated.
type Request struct {
	Name      string
	Scopes    []string
	Chats     []string
	Budget    int
	ExpiresAt *time.Time
	Approval  bool
}

// Validate turns r into the caller the key will be, or the first fault,
// each with its own code. now refuses an expiry already past.
func (r Request) Validate(now time.Time) (bridge.Caller, error) {
	c := bridge.Caller{Name: r.Name, Budget: r.Budget, Approval: r.Approval}
	if err := validName(r.Name); err != nil {
		return bridge.Caller{}, err
	}
	var err error
	if c.Scopes, err = parseScopes(r.Scopes); err != nil {
		return bridge.Caller{}, err
	}
	if c.Chats, err = parseChats(r.Chats); err != nil {
		return bridge.Caller{}, err
	}
	if r.Budget < 0 || r.Budget > MaxBudget {
		return bridge.Caller{}, bridge.Invalid(bridge.CodeInvalidKeyBudget, "budget is messages per hour: 0 (the account's pace alone) to %d", MaxBudget)
	}
	if r.ExpiresAt != nil {
		if !r.ExpiresAt.After(now) {
			return bridge.Caller{}, bridge.Invalid(bridge.CodeInvalidKeyExpiry, "expires_at must be in the future")
		}
		c.ExpiresAt = r.ExpiresAt.UTC()
	}
	return c, nil
}

func validName(name string) error {
	if name == "" || len(name) > maxNameLen || !namePattern.MatchString(name) {
		return bridge.Invalid(bridge.CodeInvalidKeyName,
			"name must be 1-%d lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", maxNameLen)
	}
	return nil
}

// ParseScope reads one scope as the API spells it.
func ParseScope(s string) (bridge.Scope, bool) {
	for _, sc := range bridge.Scopes {
		if s == string(sc) {
			return sc, true
		}
	}
	return "", false
}

func parseScopes(in []string) ([]bridge.Scope, error) {
	if len(in) == 0 {
		return nil, bridge.Invalid(bridge.CodeInvalidKeyScope, "scopes must name at least one of read, send, mcp")
	}
	out := make([]bridge.Scope, 0, len(in))
	for _, s := range in {
		sc, ok := ParseScope(s)
		if !ok {
			return nil, bridge.Invalid(bridge.CodeInvalidKeyScope, "scope %q is not one of read, send, mcp", s)
		}
		if slices.Contains(out, sc) {
			return nil, bridge.Invalid(bridge.CodeInvalidKeyScope, "scope %q is given twice", s)
		}
		out = append(out, sc)
	}
	return out, nil
}

func parseChats(in []string) ([]bridge.Recipient, error) {
	if len(in) > MaxChats {
		return nil, bridge.Invalid(bridge.CodeInvalidKeyChat, "at most %d chats", MaxChats)
	}
	out := make([]bridge.Recipient, 0, len(in))
	for _, s := range in {
		r, err := bridge.ParseRecipient(s)
		if err != nil || r.Kind == bridge.RecipientStatus {
			return nil, bridge.Invalid(bridge.CodeInvalidKeyChat,
				"chat %q must be a phone number with country code, a group <id>@g.us or a LID <digits>@lid", s)
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// joinScopes and joinChats are the stored forms: comma-separated.
func joinScopes(s []bridge.Scope) string {
	out := make([]string, len(s))
	for i, sc := range s {
		out[i] = string(sc)
	}
	return strings.Join(out, ",")
}

func joinChats(c []bridge.Recipient) string {
	out := make([]string, len(c))
	for i, r := range c {
		out[i] = r.String()
	}
	return strings.Join(out, ",")
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
