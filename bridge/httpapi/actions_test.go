package httpapi

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// fakeTargets finds messages of its log by id or WhatsApp id.
// fakeTargets is a log of messages; revoked are the WhatsApp ids whose
// revoke it holds.
type fakeTargets struct {
	log     []bridge.Message
	revoked []string
}

func (f fakeTargets) FindMessage(_ context.Context, id string) (bridge.Message, error) {
	for _, m := range f.log {
		if m.ID == id || m.WhatsAppID == id {
			return m, nil
		}
	}
	return bridge.Message{}, bridge.Errorf(bridge.KindNotFound, "message_not_found", "no such message")
}

func (f fakeTargets) Revoked(_ context.Context, whatsappID string) (bool, error) {
	return slices.Contains(f.revoked, whatsappID), nil
}

// fakeChats records the read marks and presences, failing with err.
type fakeChats struct {
	mu    sync.Mutex
	err   error
	calls []string
}

func (f *fakeChats) MarkRead(_ context.Context, chat, sender bridge.Recipient, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "read "+chat.JID()+" "+sender.JID()+" "+id)
	return f.err
}

func (f *fakeChats) SetPresence(_ context.Context, chat bridge.Recipient, p bridge.ChatPresence) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "presence "+chat.JID()+" "+string(p))
	return f.err
}

// fakeHistory is an incoming history that received 3A0123 from Alice and
// 3A0456 in a group, and knows those chats and a LID's.
type fakeHistory struct{ IncomingHistory }

var (
	historyAlice = bridge.PhoneRecipient("4915100000002")
	historyGroup = bridge.Recipient{Kind: bridge.RecipientGroup, ID: "120363025246125486"}
)

func (fakeHistory) Received(_ context.Context, id string) (chat, sender bridge.Recipient, found bool, err error) {
	switch id {
	case "3A0123":
		return historyAlice, historyAlice, true, nil
	case "3A0456":
		return historyGroup, bridge.PhoneRecipient("4915100000003"), true, nil
	}
	return bridge.Recipient{}, bridge.Recipient{}, false, nil
}

func (fakeHistory) HasChat(_ context.Context, chat bridge.Recipient) (bool, error) {
	return chat == historyAlice || chat == historyGroup || chat.JID() == "123@lid", nil
}

type fakeContacts struct{ err error }

// Cached knows 4915100000005 as on WhatsApp, 4915100000009 as not.
func (fakeContacts) Cached(_ context.Context, number string) (bridge.Contact, bool) {
	switch number {
	case "4915100000005":
		return bridge.Contact{Number: number, OnWhatsApp: true}, true
	case "4915100000009":
		return bridge.Contact{Number: number}, true
	}
	return bridge.Contact{}, false
}

// ByLID knows 123@lid as 4915100000002's.
func (fakeContacts) ByLID(_ context.Context, lid string) (bridge.Contact, bool, error) {
	if lid == "123" {
		return bridge.Contact{Number: "4915100000002", OnWhatsApp: true, JID: "4915100000002@s.whatsapp.net", LID: "123@lid"}, true, nil
	}
	return bridge.Contact{}, false, nil
}

func (f fakeContacts) Contact(_ context.Context, number string) (bridge.Contact, error) {
	if number == "4915100000002" {
		return bridge.Contact{Number: number, OnWhatsApp: true, JID: number + "@s.whatsapp.net", LID: "123@lid"}, f.err
	}
	return bridge.Contact{Number: number}, f.err
}

const jsonType = "Content-Type: application/json"

func newActionsEnv(t *testing.T) (string, *fakeMessages, *fakeChats) {
	t.Helper()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	alice := bridge.PhoneRecipient("4915100000002")
	log := []bridge.Message{
		{ID: "m1", WhatsAppID: "3EB0AAAA", Recipient: alice, Type: bridge.TypeText, Status: bridge.StatusSent, CreatedAt: now.Add(-time.Minute)},
		{ID: "m2", WhatsAppID: "3EB0BBBB", Recipient: alice, Type: bridge.TypeText, Status: bridge.StatusSent, CreatedAt: now.Add(-16 * time.Minute)},
		{ID: "m3", WhatsAppID: "3EB0CCCC", Recipient: alice, Type: bridge.TypeImage, Status: bridge.StatusSent, CreatedAt: now},
		{ID: "m4", WhatsAppID: "3EB0DDDD", Recipient: alice, Type: bridge.TypeText, Status: bridge.StatusFailed, CreatedAt: now},
		{ID: "m5", WhatsAppID: "3EB0EEEE", Recipient: alice, Type: bridge.TypeReaction, Status: bridge.StatusSent, CreatedAt: now},
		{ID: "m6", WhatsAppID: "3EB0FFFF", Recipient: alice, Type: bridge.TypeText, Status: bridge.StatusSent, CreatedAt: now},
	}
	q := &fakeMessages{}
	chats := &fakeChats{}
	srv := newTestServer(t, testDeps{Messages: q, Targets: fakeTargets{log: log, revoked: []string{"3EB0FFFF"}}, Chats: chats, Contacts: fakeContacts{}, Inbox: fakeHistory{},
		Now: func() time.Time { return now }})
	return srv.URL, q, chats
}

func TestActionsAreQueued(t *testing.T) {
	base, q, _ := newActionsEnv(t)
	key := "X-Api-Key: " + testAPIKey
	for _, tc := range []struct {
		name, method, path, body string
		typ                      bridge.MessageType
		target, sender, emoji    string
	}{
		{"react by log id", "POST", "/api/messages/m1/reaction", `{"emoji":"👍"}`, bridge.TypeReaction, "3EB0AAAA", "", "👍"},
		{"unreact by WhatsApp id", "POST", "/api/messages/3EB0AAAA/reaction", `{"emoji":""}`, bridge.TypeReaction, "3EB0AAAA", "", ""},
		{"react to a received message", "POST", "/api/messages/3A0123/reaction?chat=%2B4915100000002", `{"emoji":"❤️"}`,
			bridge.TypeReaction, "3A0123", "4915100000002@s.whatsapp.net", "❤️"},
		{"react in a group", "POST", "/api/messages/3A0456/reaction?chat=120363025246125486@g.us&sender=4915100000003", `{"emoji":"🎉"}`,
			bridge.TypeReaction, "3A0456", "4915100000003@s.whatsapp.net", "🎉"},
		{"edit", "PATCH", "/api/messages/m1", `{"text":"corrected"}`, bridge.TypeEdit, "3EB0AAAA", "", ""},
		{"revoke", "DELETE", "/api/messages/3EB0AAAA", "", bridge.TypeRevoke, "3EB0AAAA", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := call(t, tc.method, base+tc.path, strings.NewReader(tc.body), key, jsonType)
			if status != 202 || !strings.Contains(body, `"type":"`+string(tc.typ)+`"`) {
				t.Fatalf("%d %s", status, body)
			}
			req := q.submitted[len(q.submitted)-1]
			it := req.Items[0]
			if it.Type != tc.typ || it.Action == nil || it.Action.TargetID != tc.target || it.Action.TargetSender.JID() != tc.sender ||
				it.Action.Emoji != tc.emoji {
				t.Errorf("submitted %+v %+v", it, it.Action)
			}
		})
	}
	// An Idempotency-Key replays the first answer.
	for range 2 {
		status, body := call(t, "DELETE", base+"/api/messages/m1", nil, key, "Idempotency-Key: del-1")
		if status != 202 || !strings.Contains(body, `"type":"revoke"`) {
			t.Errorf("%d %s", status, body)
		}
	}
	if n := len(q.submitted); n != 7 {
		t.Errorf("%d submissions, want 7 (the repeat replays)", n)
	}
}

func TestActionsRefuseWhatWhatsAppWouldNot(t *testing.T) {
	base, q, _ := newActionsEnv(t)
	key := "X-Api-Key: " + testAPIKey
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"unknown id", "POST", "/api/messages/3A0999/reaction", `{"emoji":"👍"}`, 404, "message_not_found"},
		{"edit of a received message", "PATCH", "/api/messages/3A0999?chat=4915100000002", `{"text":"x"}`, 404, "message_not_found"},
		{"revoke of an unknown id", "DELETE", "/api/messages/3A0999", "", 404, "message_not_found"},
		{"bad id", "DELETE", "/api/messages/a.b", "", 400, "invalid_message_id"},
		{"edit too late", "PATCH", "/api/messages/m2", `{"text":"x"}`, 409, "edit_window_expired"},
		{"edit of an image", "PATCH", "/api/messages/m3", `{"text":"x"}`, 409, "not_editable"},
		{"react to a failed message", "POST", "/api/messages/m4/reaction", `{"emoji":"👍"}`, 409, "target_failed"},
		{"revoke of a reaction", "DELETE", "/api/messages/m5", "", 409, "not_actionable"},
		// Item 8: what could only waste a send.
		{"a second revoke", "DELETE", "/api/messages/m6", "", 409, "target_revoked"},
		{"a reaction whose ?chat= is not the message's", "POST", "/api/messages/3A0123/reaction?chat=4915100000004", `{"emoji":"👍"}`, 400, "chat_mismatch"},
		{"an edit after a revoke", "PATCH", "/api/messages/3EB0FFFF", `{"text":"too late"}`, 409, "target_revoked"},
		{"no emoji", "POST", "/api/messages/m1/reaction", `{}`, 400, "missing_emoji"},
		{"not an emoji", "POST", "/api/messages/m1/reaction", `{"emoji":"ok"}`, 400, "invalid_emoji"},
		{"two fields", "POST", "/api/messages/m1/reaction", `{"emoji":"👍","x":1}`, 400, "invalid_json"},
		{"empty edit", "PATCH", "/api/messages/m1", `{"text":" "}`, 400, "empty_text"},
		{"long edit", "PATCH", "/api/messages/m1", `{"text":"` + strings.Repeat("a", bridge.MaxTextBytes+1) + `"}`, 413, "body_too_large"},
		{"group without sender", "POST", "/api/messages/3A0456/reaction?chat=120363025246125486@g.us", `{"emoji":"👍"}`, 400, "missing_sender"},
		{"sender in a 1:1 chat", "POST", "/api/messages/3A0456/reaction?chat=4915100000002&sender=4915100000003", `{"emoji":"👍"}`, 400, "unexpected_sender"},
		{"sender is a group", "POST", "/api/messages/3A0456/reaction?chat=120363025246125486@g.us&sender=1203@g.us", `{"emoji":"👍"}`, 400, "invalid_sender"},
		{"bad chat", "POST", "/api/messages/3A0456/reaction?chat=abc", `{"emoji":"👍"}`, 400, "invalid_chat"},
		{"other chat", "POST", "/api/messages/m1/reaction?chat=4915100000009", `{"emoji":"👍"}`, 400, "chat_mismatch"},
		{"sender of our own", "POST", "/api/messages/m1/reaction?chat=4915100000002&sender=4915100000003", `{"emoji":"👍"}`, 400, "unexpected_sender"},
		{"unknown parameter", "DELETE", "/api/messages/m1?force=1", "", 400, "invalid_query"},
		{"revoke with a body", "DELETE", "/api/messages/m1", `{"a":1}`, 400, "unexpected_body"},
		// Every JSON door refuses what JSON would silently repair.
		{"a reaction with a NUL", "POST", "/api/messages/m1/reaction", `{"emoji":"👍\u0000"}`, 400, "invalid_text"},
		{"an edit with a lone surrogate", "PATCH", "/api/messages/m1", `{"text":"hi \ud800"}`, 400, "invalid_text"},
		{"a read mark not UTF-8", "POST", "/api/chats/4915100000002/read", "{\"message_id\":\"3A0123\xff\"}", 400, "invalid_text"},
		{"a presence with a NUL", "POST", "/api/chats/4915100000002/presence", `{"state":"composing\u0000"}`, 400, "invalid_text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := call(t, tc.method, base+tc.path, strings.NewReader(tc.body), key, jsonType)
			if status != tc.status || errorCode(t, body) != tc.code {
				t.Errorf("%d %s, want %d %s", status, body, tc.status, tc.code)
			}
		})
	}
	if status, body := call(t, "POST", base+"/api/messages/m1/reaction", strings.NewReader(`{"emoji":"👍"}`), key); status != 415 {
		t.Errorf("no content type: %d %s", status, body)
	}
	if status, body := call(t, "POST", base+"/api/messages/m1/reaction", strings.NewReader(`{"emoji":"👍"}`), jsonType); status != 401 {
		t.Errorf("no key: %d %s", status, body)
	}
	if status, body := call(t, "DELETE", base+"/api/messages/m1", nil, key, "Idempotency-Key: a b"); status != 400 ||
		errorCode(t, body) != "invalid_idempotency_key" {
		t.Errorf("bad key: %d %s", status, body)
	}
	q.submitErr = bridge.Internal("store_failed", "the request could not be stored; nothing will be sent", nil)
	if status, body := call(t, "DELETE", base+"/api/messages/m1", nil, key); status != 500 || errorCode(t, body) != "store_failed" {
		t.Errorf("store failed: %d %s", status, body)
	}
	if len(q.submitted) != 0 {
		t.Errorf("refused actions were submitted: %+v", q.submitted)
	}
}

func TestChatReadAndPresence(t *testing.T) {
	base, _, chats := newActionsEnv(t)
	key := "X-Api-Key: " + testAPIKey
	for _, tc := range []struct {
		path, body string
		status     int
		want       string // the call, or the error code
	}{
		{"/api/chats/4915100000002/read", `{"message_id":"3A0123"}`, 204, "read 4915100000002@s.whatsapp.net  3A0123"},
		{"/api/chats/120363025246125486@g.us/read", `{"message_id":"3A0456","sender":"4915100000003"}`, 204,
			"read 120363025246125486@g.us 4915100000003@s.whatsapp.net 3A0456"},
		{"/api/chats/4915100000002@s.whatsapp.net/presence", `{"state":"recording"}`, 204, "presence 4915100000002@s.whatsapp.net recording"},
		{"/api/chats/123@lid/presence", `{"state":"paused"}`, 204, "presence 123@lid paused"},
		{"/api/chats/4915100000005/presence", `{"state":"composing"}`, 204, "presence 4915100000005@s.whatsapp.net composing"},
		{"/api/chats/4915100000002/read", `{"message_id":"3A9999"}`, 404, "unknown_message"},
		{"/api/chats/4915100000004/read", `{"message_id":"3A0123"}`, 404, "unknown_message"},
		{"/api/chats/4915100000009/presence", `{"state":"composing"}`, 404, "unknown_chat"},
		{"/api/chats/4915100000007/presence", `{"state":"composing"}`, 404, "unknown_chat"},
		{"/api/chats/120363000000000001@g.us/presence", `{"state":"composing"}`, 404, "unknown_chat"},
		{"/api/chats/49-151/read", `{"message_id":"3A0123"}`, 400, "invalid_chat"},
		{"/api/chats/4915100000002/read", `{}`, 400, "missing_message_id"},
		{"/api/chats/4915100000002/read", `{"message_id":"3A 1"}`, 400, "invalid_message_id"},
		{"/api/chats/4915100000002/read", `{"message_id":"3A0123","sender":"4915100000003"}`, 400, "unexpected_sender"},
		{"/api/chats/120363025246125486@g.us/read", `{"message_id":"3A0123"}`, 400, "missing_sender"},
		{"/api/chats/120363025246125486@g.us/read", `{"message_id":"3A0123","sender":"x"}`, 400, "invalid_sender"},
		{"/api/chats/4915100000002/presence", `{}`, 400, "missing_state"},
		{"/api/chats/4915100000002/presence", `{"state":"typing"}`, 400, "invalid_state"},
		{"/api/chats/4915100000002/presence", `[]`, 400, "invalid_json"},
	} {
		before := len(chats.calls)
		status, body := call(t, "POST", base+tc.path, strings.NewReader(tc.body), key, jsonType)
		if status != tc.status {
			t.Errorf("%s %s: %d %s", tc.path, tc.body, status, body)
			continue
		}
		if status == 204 && (len(chats.calls) != before+1 || chats.calls[before] != tc.want) {
			t.Errorf("%s: calls %q, want %q", tc.path, chats.calls[before:], tc.want)
		}
		if status != 204 && errorCode(t, body) != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.path, tc.body, body, tc.want)
		}
	}
	chats.err = bridge.ErrNotLinked
	if status, body := call(t, "POST", base+"/api/chats/4915100000002/presence", strings.NewReader(`{"state":"paused"}`), key, jsonType); status != 503 ||
		errorCode(t, body) != "not_linked" {
		t.Errorf("not linked: %d %s", status, body)
	}
	chats.err = context.DeadlineExceeded
	if status, _ := call(t, "POST", base+"/api/chats/4915100000002/read", strings.NewReader(`{"message_id":"3A0123"}`), key, jsonType); status != 504 {
		t.Errorf("timeout: %d", status)
	}
	chats.err = errTest
	if status, _ := call(t, "POST", base+"/api/chats/4915100000002/read", strings.NewReader(`{"message_id":"3A0123"}`), key, jsonType); status != 502 {
		t.Errorf("whatsapp error: %d", status)
	}
}

var errTest = &testError{}

type testError struct{}

func (*testError) Error() string { return "refused" }

func TestContact(t *testing.T) {
	base, _, _ := newActionsEnv(t)
	key := "X-Api-Key: " + testAPIKey
	status, body := call(t, "GET", base+"/api/contacts/+4915100000002", nil, key)
	if want := `{"number":"4915100000002","on_whatsapp":true,"jid":"4915100000002@s.whatsapp.net","lid":"123@lid"}` + "\n"; status != 200 || body != want {
		t.Errorf("on WhatsApp: %d %s", status, body)
	}
	status, body = call(t, "GET", base+"/api/contacts/4915100000009?apiKey="+testAPIKey, nil)
	if want := `{"number":"4915100000009","on_whatsapp":false,"jid":null,"lid":null}` + "\n"; status != 200 || body != want {
		t.Errorf("not on WhatsApp: %d %s", status, body)
	}
	// A LID names its contact by the number the account learned.
	status, body = call(t, "GET", base+"/api/contacts/123@lid", nil, key)
	if want := `{"number":"4915100000002","on_whatsapp":true,"jid":"4915100000002@s.whatsapp.net","lid":"123@lid"}` + "\n"; status != 200 || body != want {
		t.Errorf("by LID: %d %s", status, body)
	}
	if status, body := call(t, "GET", base+"/api/contacts/456@lid", nil, key); status != 404 || errorCode(t, body) != "unknown_lid" {
		t.Errorf("an unknown LID: %d %s", status, body)
	}
	for _, bad := range []string{"49-151-0000", "0151000000", "12", "abc", "%2B%2B4915100000002", "4915100000002%20", "@lid", "12a@lid"} {
		if status, body := call(t, "GET", base+"/api/contacts/"+bad, nil, key); status != 400 || errorCode(t, body) != "invalid_number" {
			t.Errorf("%s: %d %s", bad, status, body)
		}
	}
	if status, body := call(t, "GET", base+"/api/contacts/4915100000002?x=1", nil, key); status != 400 || errorCode(t, body) != "invalid_query" {
		t.Errorf("unknown parameter: %d %s", status, body)
	}
	srv := newTestServer(t, testDeps{Messages: &fakeMessages{}, Contacts: fakeContacts{err: bridge.ErrNotLinked}})
	if status, body := call(t, "GET", srv.URL+"/api/contacts/4915100000002", nil, key); status != 503 || errorCode(t, body) != "not_linked" {
		t.Errorf("not linked: %d %s", status, body)
	}
	// Beyond CHECK_RATE: 429 with the wait, rounded up to whole seconds.
	limited := &bridge.Error{Kind: bridge.KindRateLimited, Code: "check_rate_limited", Message: "later", Err: bridge.RetryAfter(1500 * time.Millisecond)}
	srv = newTestServer(t, testDeps{Messages: &fakeMessages{}, Contacts: fakeContacts{err: limited}})
	resp := do(t, "GET", srv.URL+"/api/contacts/4915100000002", nil, key)
	_ = resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("beyond the check budget: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
