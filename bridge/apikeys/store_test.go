package apikeys_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/apikeys"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

const owner = bridge.Secret("owner-key-0123456789")

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func open(t *testing.T) (*apikeys.Keys, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	k, err := apikeys.Open(context.Background(), testutil.OpenBridgeDB(t), owner, c.now)
	if err != nil {
		t.Fatal(err)
	}
	return k, c
}

func code(err error) string { return bridge.ErrorOf(err).Code }

func TestCreateShowsTheSecretOnceAndAuthenticates(t *testing.T) {
	ctx := context.Background()
	k, _ := open(t)
	key, secret, err := k.Create(ctx, apikeys.Request{Name: "assistant", Scopes: []string{"read", "mcp"},
		Chats: []string{"+49 151 234567", "123@g.us"}, Budget: 10, Approval: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret.Reveal(), apikeys.SecretPrefix) || len(secret.Reveal()) < 40 {
		t.Fatalf("secret %q is not a 32-byte key", secret.Reveal())
	}
	c, err := k.Authenticate(secret.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "assistant" || !c.Has(bridge.ScopeMCP) || c.Has(bridge.ScopeSend) || !c.Approval || c.Budget != 10 {
		t.Errorf("caller %+v", c)
	}
	if !c.MayReach(bridge.PhoneRecipient("49151234567")) || c.MayReach(bridge.PhoneRecipient("49151234568")) {
		t.Errorf("allowlist %v", c.Chats)
	}
	if key.Source != apikeys.SourceAPI {
		t.Errorf("source %q", key.Source)
	}
	list, err := k.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "assistant" || len(list[0].Chats) != 2 {
		t.Fatalf("list %+v, %v", list, err)
	}
	if o, err := k.Authenticate(owner.Reveal()); err != nil || o.Name != bridge.OwnerName || !o.AllChats() {
		t.Errorf("owner: %+v, %v", o, err)
	}
}

func TestRevokedAndExpiredKeysAreRefusedAtOnce(t *testing.T) {
	ctx := context.Background()
	k, clk := open(t)
	in := clk.t.Add(time.Hour)
	_, expiring, err := k.Create(ctx, apikeys.Request{Name: "short", Scopes: []string{"read"}, ExpiresAt: &in})
	if err != nil {
		t.Fatal(err)
	}
	_, revoked, err := k.Create(ctx, apikeys.Request{Name: "gone", Scopes: []string{"send"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Revoke(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Authenticate(revoked.Reveal()); !errors.Is(err, bridge.ErrUnauthorized) {
		t.Errorf("revoked key: %v", err)
	}
	if _, err := k.Authenticate(expiring.Reveal()); err != nil {
		t.Errorf("before expiry: %v", err)
	}
	clk.t = in
	if _, err := k.Authenticate(expiring.Reveal()); !errors.Is(err, bridge.ErrUnauthorized) {
		t.Errorf("at expiry: %v", err)
	}
	if err := k.Revoke(ctx, "gone"); code(err) != bridge.CodeKeyNotFound {
		t.Errorf("second revoke: %v", err)
	}
	if _, err := k.Authenticate("not-a-key-at-all-123"); !errors.Is(err, bridge.ErrUnauthorized) {
		t.Errorf("wrong key: %v", err)
	}
}

func TestKeysSurviveAReopenHashedOnly(t *testing.T) {
	ctx := context.Background()
	db := testutil.OpenBridgeDB(t)
	k, err := apikeys.Open(ctx, db, owner, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := k.Create(ctx, apikeys.Request{Name: "bot", Scopes: []string{"send"}})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM api_keys WHERE instr(CAST(hash AS TEXT), ?) > 0 OR length(hash) <> 32`, secret.Reveal()).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the secret is stored as it is (%d rows, %v)", n, err)
	}
	again, err := apikeys.Open(ctx, db, owner, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := again.Authenticate(secret.Reveal()); err != nil || c.Name != "bot" {
		t.Errorf("after reopen: %+v, %v", c, err)
	}
}

func TestValidationCodes(t *testing.T) {
	k, clk := open(t)
	past := clk.t.Add(-time.Second)
	for _, tc := range []struct {
		req  apikeys.Request
		code string
	}{
		{apikeys.Request{Name: "", Scopes: []string{"read"}}, bridge.CodeInvalidKeyName},
		{apikeys.Request{Name: "Bad Name", Scopes: []string{"read"}}, bridge.CodeInvalidKeyName},
		{apikeys.Request{Name: "a", Scopes: nil}, bridge.CodeInvalidKeyScope},
		{apikeys.Request{Name: "a", Scopes: []string{"admin"}}, bridge.CodeInvalidKeyScope},
		{apikeys.Request{Name: "a", Scopes: []string{"read", "read"}}, bridge.CodeInvalidKeyScope},
		{apikeys.Request{Name: "a", Scopes: []string{"read"}, Chats: []string{"12"}}, bridge.CodeInvalidKeyChat},
		{apikeys.Request{Name: "a", Scopes: []string{"read"}, Chats: []string{"status@broadcast"}}, bridge.CodeInvalidKeyChat},
		{apikeys.Request{Name: "a", Scopes: []string{"read"}, Budget: -1}, bridge.CodeInvalidKeyBudget},
		{apikeys.Request{Name: "a", Scopes: []string{"read"}, Budget: apikeys.MaxBudget + 1}, bridge.CodeInvalidKeyBudget},
		{apikeys.Request{Name: "a", Scopes: []string{"read"}, ExpiresAt: &past}, bridge.CodeInvalidKeyExpiry},
	} {
		if _, _, err := k.Create(context.Background(), tc.req); code(err) != tc.code {
			t.Errorf("%+v: %v, want %s", tc.req, err, tc.code)
		}
	}
	if _, _, err := k.Create(context.Background(), apikeys.Request{Name: "a", Scopes: []string{"read"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := k.Create(context.Background(), apikeys.Request{Name: "a", Scopes: []string{"read"}}); code(err) != bridge.CodeKeyExists {
		t.Errorf("a name twice: %v", err)
	}
}

func TestSyncReplacesOnlyTheResourcesKeys(t *testing.T) {
	ctx := context.Background()
	k, _ := open(t)
	if _, _, err := k.Create(ctx, apikeys.Request{Name: "made-by-hand", Scopes: []string{"read"}}); err != nil {
		t.Fatal(err)
	}
	first := map[string]apikeys.Resource{
		"crm": {Request: apikeys.Request{Name: "crm", Scopes: []string{"send"}}, Secret: "crm-secret-0123456789"},
		"old": {Request: apikeys.Request{Name: "old", Scopes: []string{"read"}}, Secret: "old-secret-0123456789"},
	}
	if err := k.Sync(ctx, first); err != nil {
		t.Fatal(err)
	}
	rotated := map[string]apikeys.Resource{
		"crm": {Request: apikeys.Request{Name: "crm", Scopes: []string{"send", "read"}}, Secret: "crm-rotated-0123456789"},
	}
	if err := k.Sync(ctx, rotated); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Authenticate("crm-secret-0123456789"); err == nil {
		t.Error("the rotated secret still works")
	}
	if c, err := k.Authenticate("crm-rotated-0123456789"); err != nil || !c.Has(bridge.ScopeRead) {
		t.Errorf("rotated: %+v, %v", c, err)
	}
	if _, err := k.Authenticate("old-secret-0123456789"); err == nil {
		t.Error("a key the resource dropped still works")
	}
	clash := map[string]apikeys.Resource{"made-by-hand": {Request: apikeys.Request{Name: "made-by-hand", Scopes: []string{"send"}}, Secret: "hand-secret-0123456789"}}
	if err := k.Sync(ctx, clash); code(err) != bridge.CodeKeyExists {
		t.Errorf("the resource took over a key made by the API: %v", err)
	}
}

func TestBudgetRefusesOverTheHourAndSaysWhen(t *testing.T) {
	k, clk := open(t)
	c := bridge.Caller{Name: "bot", Budget: 3}
	for i := range 3 {
		if _, err := k.Spend(c, 1); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		clk.t = clk.t.Add(10 * time.Minute)
	}
	wait, err := k.Spend(c, 1)
	if !errors.Is(err, bridge.ErrOverBudget) || wait != 30*time.Minute {
		t.Fatalf("fourth send: wait %s, %v; want 30m and over budget", wait, err)
	}
	clk.t = clk.t.Add(wait)
	if _, err := k.Spend(c, 1); err != nil {
		t.Errorf("after the oldest aged out: %v", err)
	}
	if _, err := k.Spend(bridge.Caller{Name: "free"}, 1000); err != nil {
		t.Errorf("no budget: %v", err)
	}
}
