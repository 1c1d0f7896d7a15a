package sendqueue

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// fakeChecker answers from onWhatsApp and counts the questions.
type fakeChecker struct {
	mu         sync.Mutex
	onWhatsApp map[string]bool
	err        error
	asked      int
}

func (c *fakeChecker) Contact(_ context.Context, number string) (bridge.Contact, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked++
	return bridge.Contact{Number: number, OnWhatsApp: c.onWhatsApp[number]}, c.err
}

// fakeAccounts is the linked account.
type fakeAccounts struct {
	mu      sync.Mutex
	account string
}

func (a *fakeAccounts) Account() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.account
}

func (a *fakeAccounts) set(account string) {
	a.mu.Lock()
	a.account = account
	a.mu.Unlock()
}

// A number not on WhatsApp fails at its first attempt, with its reason and
// no retries; nothing is sent. A check that cannot be made is retried.
func TestNotOnWhatsAppFailsAtOnce(t *testing.T) {
	f := newFixture(t, time.Hour)
	checker := &fakeChecker{onWhatsApp: map[string]bool{}}
	f.open(func(_ *MessageLogOptions, o *Options) { o.Checker = checker })
	m := f.submit(textRequest("hi")).Messages[0]
	if m.Status != bridge.StatusFailed || m.LastError != bridge.FailNotOnWhatsApp || m.RetryCount != 0 ||
		m.FailReason() != bridge.FailNotOnWhatsApp {
		t.Fatalf("message %+v", m)
	}
	if n := len(f.sender.calls()); n != 0 {
		t.Errorf("%d sends to a number not on WhatsApp", n)
	}
	if got := f.events.events(); len(got) != 1 || got[0] != m.WhatsAppID+" Failed" {
		t.Errorf("events %v", got)
	}

	checker.onWhatsApp[alice.ID] = true
	if m := f.submit(textRequest("hi")).Messages[0]; m.Status != bridge.StatusSent {
		t.Errorf("a number on WhatsApp: %+v", m)
	}
	checker.err = bridge.ErrNotLinked
	if m := f.submit(textRequest("hi")).Messages[0]; m.Status != bridge.StatusQueued || m.LastError == "" {
		t.Errorf("a check that failed: %+v", m)
	}
	// Groups are not checked.
	asked := checker.asked
	f.submit(Request{Recipient: bridge.Recipient{Kind: bridge.RecipientGroup, ID: "120363025246125486"},
		Items: []Item{{Type: bridge.TypeText, Text: "hi"}}})
	if checker.asked != asked {
		t.Error("a group was checked")
	}
}

// Actions are stored with their target and sent with it; a repeat of the
// Idempotency-Key with another emoji is another request.
func TestActionsCarryTheirTarget(t *testing.T) {
	f := newFixture(t, time.Hour)
	text := f.submit(textRequest("hi")).Messages[0]
	bob := bridge.PhoneRecipient("4915100000009")
	req := Request{Recipient: alice, IdempotencyKey: "k1", Items: []Item{{Type: bridge.TypeReaction,
		Action: &Action{TargetID: text.WhatsAppID, TargetSender: bob, Emoji: "👍"}}}}
	if m := f.submit(req).Messages[0]; m.Status != bridge.StatusSent || m.Type != bridge.TypeReaction {
		t.Fatalf("reaction %+v", m)
	}
	calls := f.sender.calls()
	out := calls[len(calls)-1].out
	if out.Type != bridge.TypeReaction || out.TargetID != text.WhatsAppID || out.Emoji != "👍" || out.TargetSender != bob {
		t.Errorf("sent %+v", out)
	}
	req.Items[0].Action.Emoji = "❤️"
	_, err := f.q.Submit(context.Background(), req)
	wantError(t, err, bridge.KindConflict, "idempotency_key_reused")

	if _, err := f.q.Submit(context.Background(), Request{Recipient: alice, Items: []Item{{Type: bridge.TypeRevoke}}}); err == nil {
		t.Error("a revoke without a target was accepted")
	}
	found, err := f.log.FindMessage(context.Background(), text.WhatsAppID)
	if err != nil || found.ID != text.ID {
		t.Errorf("by WhatsApp id: %+v %v", found, err)
	}
	if _, err := f.log.FindMessage(context.Background(), "nope"); bridge.ErrorOf(err).Code != "message_not_found" {
		t.Errorf("unknown id: %v", err)
	}
}

// Item 8 of issue 25: the log knows a message is revoked once its revoke
// is stored, so that an edit or a second revoke can be refused.
func TestRevokedKnowsTheRevoke(t *testing.T) {
	f := newFixture(t, time.Hour)
	text := f.submit(textRequest("hi")).Messages[0]
	ctx := context.Background()
	if revoked, err := f.log.Revoked(ctx, text.WhatsAppID); err != nil || revoked {
		t.Fatalf("before the revoke: %v %v", revoked, err)
	}
	f.submit(Request{Recipient: alice, Items: []Item{{Type: bridge.TypeRevoke, Action: &Action{TargetID: text.WhatsAppID}}}})
	if revoked, err := f.log.Revoked(ctx, text.WhatsAppID); err != nil || !revoked {
		t.Errorf("after the revoke: %v %v", revoked, err)
	}
}

// An edit still waiting when WhatsApp's 15 minutes are over fails with
// that reason instead of being sent.
func TestEditPastTheWindowFails(t *testing.T) {
	f := newFixture(t, time.Hour)
	now := time.Now()
	f.open(func(l *MessageLogOptions, _ *Options) { l.Now = func() time.Time { return now } })
	text := f.submit(textRequest("hi")).Messages[0]
	now = now.Add(bridge.EditWindow + time.Second)
	m := f.submit(Request{Recipient: alice, Items: []Item{{Type: bridge.TypeEdit, Text: "late",
		Action: &Action{TargetID: text.WhatsAppID}}}}).Messages[0]
	if m.Status != bridge.StatusFailed || m.FailReason() != bridge.FailEditWindowExpired {
		t.Errorf("late edit %+v", m)
	}
}

// A message belongs to the account linked when it was accepted: a logout
// fails it with reason logged_out (its event in the same transaction), and
// the next account never sends it; a message accepted with no account
// linked belongs to the next one.
func TestLogoutFailsTheAccountsMessages(t *testing.T) {
	f := newFixture(t, time.Hour)
	accounts := &fakeAccounts{account: "4915100000001"}
	f.open(func(_ *MessageLogOptions, o *Options) { o.Accounts = accounts })
	f.sender.setReady(false)
	pending := f.submit(textRequest("waits")).Messages[0]

	sessionChanged(t, f, bridge.SessionStatus{State: contract.StateUnpaired, Reason: contract.ReasonUserLogout})
	m := f.waitStatus(pending.ID, bridge.StatusFailed)
	if m.LastError != bridge.FailLoggedOut || m.FailReason() != bridge.FailLoggedOut {
		t.Errorf("after logout: %+v", m)
	}
	if got := f.events.events(); len(got) != 1 || got[0] != pending.WhatsAppID+" Failed" {
		t.Errorf("events %v", got)
	}

	accounts.set("")
	unowned := f.submit(textRequest("for the next account")).Messages[0]
	sessionChanged(t, f, bridge.SessionStatus{State: contract.StateConnecting, Account: "4915100000002"})
	if n := f.count(`SELECT count(*) FROM messages WHERE id = ? AND account = '4915100000002'`, unowned.ID); n != 1 {
		t.Error("the next account did not adopt a message accepted with none linked")
	}
	if n := f.count(`SELECT count(*) FROM messages WHERE id = ? AND account = '4915100000001'`, pending.ID); n != 1 {
		t.Error("a failed message changed its account")
	}

	// A message that raced the logout is refused at its attempt.
	accounts.set("4915100000001")
	raced := f.submit(textRequest("raced")).Messages[0]
	accounts.set("4915100000002")
	f.sender.setReady(true)
	if _, err := f.db.Exec(`UPDATE messages SET next_attempt_at = 0 WHERE status = 'Queued'`); err != nil {
		t.Fatal(err) // due now, not after the hour-long retry delay
	}
	f.run()
	f.waitStatus(unowned.ID, bridge.StatusSent)
	if m := f.waitStatus(raced.ID, bridge.StatusFailed); m.LastError != bridge.FailLoggedOut {
		t.Errorf("raced: %+v", m)
	}
	for _, c := range f.sender.calls() {
		if c.out.ID == raced.WhatsAppID {
			t.Error("the raced message was sent from the next account")
		}
	}
}

func sessionChanged(t *testing.T, f *fixture, s bridge.SessionStatus) {
	t.Helper()
	if err := f.writer.Do(context.Background(), func(tx *sql.Tx) error {
		return f.log.SessionChanged(context.Background(), tx, s)
	}); err != nil {
		t.Fatal(err)
	}
}
