package bridge

import (
	"context"
	"testing"
	"time"
)

func TestCallerScopesChatsAndExpiry(t *testing.T) {
	c := Caller{Name: "bot", Scopes: []Scope{ScopeRead}, Chats: []Recipient{PhoneRecipient("4915112345")}}
	if err := c.Require(ScopeSend); ErrorOf(err).Code != CodeScopeMissing || ErrorKind(err) != KindForbidden {
		t.Errorf("send without the scope: %v", err)
	}
	if err := c.Require(ScopeRead); err != nil {
		t.Errorf("read: %v", err)
	}
	if err := c.RequireChat(PhoneRecipient("4915199999")); ErrorOf(err).Code != CodeChatNotAllowed {
		t.Errorf("outside the allowlist: %v", err)
	}
	if err := c.RequireChat(PhoneRecipient("4915112345")); err != nil {
		t.Errorf("inside: %v", err)
	}
	now := time.Now()
	if c.Expired(now) {
		t.Error("a key without expiry expired")
	}
	c.ExpiresAt = now
	if !c.Expired(now) {
		t.Error("a key at its expiry still works")
	}
	if got := CallerOf(context.Background()); got.Name != OwnerName || !got.AllChats() || !got.Has(ScopeMCP) {
		t.Errorf("no caller in the context: %+v", got)
	}
	if got := CallerOf(WithCaller(context.Background(), c)); got.Name != "bot" {
		t.Errorf("caller from the context: %+v", got)
	}
}
