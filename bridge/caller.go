package bridge

import (
	"context"
	"slices"
	"time"
)

// Scope is what an API key may do: read the account's messages, send in
// its name, or use the MCP door. The admin token is apart: no scope gives
// what it gives.
type Scope string

// The scopes.
const (
	ScopeRead Scope = "read"
	ScopeSend Scope = "send"
	ScopeMCP  Scope = "mcp"
)

// Scopes lists every scope, in the order the API spells them.
var Scopes = []Scope{ScopeRead, ScopeSend, ScopeMCP}

// OwnerName is the caller that presented API_KEY: every scope, every chat,
// no budget but the account's pace, no approval.
const OwnerName = "API_KEY"

// Caller is who presented a credential to a door: API_KEY (Owner) or a
// named, scoped key. Every door checks it the same way, so a key can do
// nothing through one door that another refuses.
type Caller struct {
	// Name is the key's name, under which its every use is audited.
	Name   string
	Scopes []Scope
	// Chats are the chats the key may read and write; empty: every chat.
	// A contact named by its number and by its LID is two entries.
	Chats []Recipient
	// Budget is how many messages the key may send per hour, below the
	// account's pace; 0: the pace alone.
	Budget int
	// ExpiresAt is when the key stops working; zero: never.
	ExpiresAt time.Time
	// Approval holds the key's sends as AwaitingApproval until a person
	// approves them.
	Approval bool
}

// Owner is the caller of API_KEY.
func Owner() Caller { return Caller{Name: OwnerName, Scopes: Scopes} }

// Has reports whether the caller holds scope s.
func (c Caller) Has(s Scope) bool { return slices.Contains(c.Scopes, s) }

// Require is nil when the caller holds scope s, else a 403 scope_missing.
func (c Caller) Require(s Scope) error {
	if c.Has(s) {
		return nil
	}
	return Errorf(KindForbidden, CodeScopeMissing, "the key %q lacks the %q scope", c.Name, s)
}

// AllChats reports a caller without an allowlist.
func (c Caller) AllChats() bool { return len(c.Chats) == 0 }

// MayReach reports whether chat is in the caller's allowlist (or it has
// none).
func (c Caller) MayReach(chat Recipient) bool {
	return c.AllChats() || slices.Contains(c.Chats, chat)
}

// RequireChat is nil when the caller may read and write chat, else a 403
// chat_not_allowed.
func (c Caller) RequireChat(chat Recipient) error {
	if c.MayReach(chat) {
		return nil
	}
	return Errorf(KindForbidden, CodeChatNotAllowed, "the key %q may not reach the chat %s", c.Name, chat)
}

// Expired reports whether the key no longer works at now.
func (c Caller) Expired(now time.Time) bool {
	return !c.ExpiresAt.IsZero() && !now.Before(c.ExpiresAt)
}

// ErrOverBudget answers a send over its key's hourly budget (429, with the
// Retry-After a door sets).
var ErrOverBudget = Errorf(KindRateLimited, CodeKeyBudgetExceeded,
	"the key's hourly send budget is spent; retry after the Retry-After seconds")

// OverBudget is ErrOverBudget, retryable after wait.
func OverBudget(wait time.Duration) error {
	e := *ErrOverBudget
	e.Err = RetryAfter(wait)
	return &e
}

type callerKey struct{}

// WithCaller returns ctx carrying c: a door puts the caller there once it
// checked the credential, and the use cases read it.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf is the caller ctx carries; Owner when none does (the bridge's
// own work, such as the reply to a rejected call, which no key started).
func CallerOf(ctx context.Context) Caller {
	if c, ok := ctx.Value(callerKey{}).(Caller); ok {
		return c
	}
	return Owner()
}
