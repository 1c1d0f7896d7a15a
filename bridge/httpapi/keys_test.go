package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/apikeys"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/cloudapi"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// Scoped keys through every door of the real router: the real key store,
// queue, outbox and audit log over real SQLite files; the session is a
// recording port. Every call is checked against the API description.

const (
	allowedChat = "4915100000011"
	otherChat   = "4915100000022"
)

type keysEnv struct {
	srv    *httptest.Server
	keys   *apikeys.Keys
	sender *recordingSender
	outbox *webhook.Outbox
	audit  *audit.Trail
}

func newKeysEnv(t *testing.T) *keysEnv {
	t.Helper()
	db := testutil.OpenBridgeDB(t)
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	keys, err := apikeys.Open(context.Background(), db, testAPIKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &keysEnv{keys: keys, sender: &recordingSender{}, audit: openAuditLog(t, nil)}
	e.outbox = webhook.New(webhook.Options{DB: db, Batcher: writer, Log: logr.Discard()})
	dir := t.TempDir()
	log := sendqueue.NewMessageLog(sendqueue.MessageLogOptions{DB: db, Batcher: writer, Log: logr.Discard()})
	queue := sendqueue.New(sendqueue.Options{Log: log, Sender: e.sender, Schedule: []time.Duration{time.Hour}})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = queue.Run(ctx); close(stopped) }() // approved sends go by the worker
	t.Cleanup(func() { cancel(); <-stopped })
	uploads := spool.NewUploads(spool.UploadOptions{DB: db, Batcher: writer, Dir: dir, Log: logr.Discard()})
	e.srv = newTestServer(t, testDeps{Messages: queue, Targets: queue, Uploads: uploads, Chats: &fakeChats{}, Inbox: fakeHistory{},
		Keys: keys, Approvals: queue, Events: e.outbox, Audit: AuditRecorder{Trail: e.audit, Logger: logr.Discard()},
		Send:          SendConfig{APIKey: testAPIKey, SpoolDir: dir, MaxFileSize: 1 << 20},
		CloudAPIPaths: cloudapi.PathPrefix,
		CloudAPI: func(checkKey KeyCheck) http.Handler {
			return cloudapi.New(cloudapi.Config{CheckKey: checkKey, Sending: sendqueue.Sending{Queue: queue, Log: logr.Discard(), Budget: keys},
				Targets: queue, Chats: &fakeChats{}, Space: spool.NewSpace(dir, 0), MaxFileSize: 1 << 20,
				Uploads: uploads, History: fakeHistory{}, Log: logr.Discard()})
		}})
	return e
}

// createKey makes a key through the admin API and returns its secret.
func (e *keysEnv) createKey(t *testing.T, body string) string {
	t.Helper()
	status, raw := call(t, http.MethodPost, e.srv.URL+"/api/admin/keys", strings.NewReader(body),
		"X-Admin-Token: "+testAdminToken, "Content-Type: application/json")
	if status != http.StatusCreated {
		t.Fatalf("create key: %d %s", status, raw)
	}
	var k struct{ Key string }
	if err := json.Unmarshal([]byte(raw), &k); err != nil || k.Key == "" {
		t.Fatalf("no key in %s", raw)
	}
	return k.Key
}

func (e *keysEnv) postJSON(t *testing.T, key, to string) (int, string) {
	t.Helper()
	return call(t, http.MethodPost, e.srv.URL+"/api/messages", strings.NewReader(`{"to":"`+to+`","type":"text","text":"hello"}`),
		"X-Api-Key: "+key, "Content-Type: application/json")
}

func (e *keysEnv) postForm(t *testing.T, key, to string) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range [][2]string{{"apiKey", key}, {"number", to}, {"type[]", "text"}, {"text[]", "hello"}} {
		_ = mw.WriteField(f[0], f[1])
	}
	_ = mw.Close()
	return call(t, http.MethodPost, e.srv.URL+"/send", &body, "Content-Type: "+mw.FormDataContentType())
}

func (e *keysEnv) postCloud(t *testing.T, key, to string) (int, graphErrorBody) {
	t.Helper()
	status, raw := call(t, http.MethodPost, e.srv.URL+"/v21.0/4915100000001/messages",
		strings.NewReader(`{"messaging_product":"whatsapp","to":"`+to+`","type":"text","text":{"body":"hello"}}`),
		"Authorization: Bearer "+key, "Content-Type: application/json")
	var g graphErrorBody
	if status >= 400 {
		g = graphError(t, raw)
	}
	return status, g
}

// A key without the send scope, and a key sending outside its chats, are
// refused with their own codes on the JSON, form and Cloud doors; inside
// its chats the same key sends, and the refusals sent nothing.
func TestScopedKeySendsOnEveryDoor(t *testing.T) {
	e := newKeysEnv(t)
	reader := e.createKey(t, `{"name":"reader","scopes":["read"]}`)
	sender := e.createKey(t, `{"name":"sender","scopes":["send"],"chats":["`+allowedChat+`"]}`)
	for _, tc := range []struct {
		key, to, code string
	}{
		{reader, allowedChat, bridge.CodeScopeMissing},
		{sender, otherChat, bridge.CodeChatNotAllowed},
	} {
		if status, raw := e.postJSON(t, tc.key, tc.to); status != http.StatusForbidden || errorCode(t, raw) != tc.code {
			t.Errorf("JSON to %s: %d %s, want 403 %s", tc.to, status, raw, tc.code)
		}
		if status, raw := e.postForm(t, tc.key, tc.to); status != http.StatusForbidden || errorCode(t, raw) != tc.code {
			t.Errorf("form to %s: %d %s, want 403 %s", tc.to, status, raw, tc.code)
		}
		if status, g := e.postCloud(t, tc.key, tc.to); status != http.StatusForbidden || g.Error.MsgbridgeCode != tc.code ||
			g.Error.Code != cloudapi.CodePermission {
			t.Errorf("Cloud to %s: %d %+v, want 403 (#10) %s", tc.to, status, g, tc.code)
		}
	}
	for door, send := range map[string]func(*testing.T, string, string) (int, string){"JSON": e.postJSON, "form": e.postForm} {
		if status, raw := send(t, sender, allowedChat); status >= 300 {
			t.Errorf("%s inside the allowlist: %d %s", door, status, raw)
		}
	}
	if status, g := e.postCloud(t, sender, allowedChat); status != http.StatusOK {
		t.Errorf("Cloud inside the allowlist: %d %+v", status, g)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return len(e.sender.outgoing()) == 3 }, "the three allowed sends")
	for _, out := range e.sender.outgoing() {
		if out.Recipient.String() != allowedChat {
			t.Errorf("sent to %s", out.Recipient)
		}
	}
}

// A key with an allowlist reads its chats only: a list names one of them,
// a message of another chat is refused; a key without read is refused.
func TestScopedKeyReads(t *testing.T) {
	e := newKeysEnv(t)
	if status, raw := e.postJSON(t, testAPIKey, otherChat); status >= 300 {
		t.Fatalf("owner send: %d %s", status, raw)
	}
	var sent struct {
		Messages []struct{ ID string } `json:"messages"`
	}
	_, raw := call(t, http.MethodGet, e.srv.URL+"/api/messages", nil, "X-Api-Key: "+testAPIKey)
	if err := json.Unmarshal([]byte(raw), &sent); err != nil || len(sent.Messages) != 1 {
		t.Fatalf("owner list: %s", raw)
	}
	reader := e.createKey(t, `{"name":"reader","scopes":["read"],"chats":["`+allowedChat+`"]}`)
	sender := e.createKey(t, `{"name":"sender","scopes":["send"]}`)
	for _, tc := range []struct {
		key, path, code string
	}{
		{reader, "/api/messages", bridge.CodeChatNotAllowed},
		{reader, "/api/messages?chat=" + otherChat, bridge.CodeChatNotAllowed},
		{reader, "/api/messages?direction=in&chat=" + otherChat, bridge.CodeChatNotAllowed},
		{reader, "/api/messages/" + sent.Messages[0].ID, bridge.CodeChatNotAllowed},
		{reader, "/api/contacts/" + otherChat, bridge.CodeChatNotAllowed},
		{sender, "/api/messages", bridge.CodeScopeMissing},
		{sender, "/api/events", bridge.CodeScopeMissing},
	} {
		if status, raw := call(t, http.MethodGet, e.srv.URL+tc.path, nil, "X-Api-Key: "+tc.key); status != http.StatusForbidden || errorCode(t, raw) != tc.code {
			t.Errorf("GET %s: %d %s, want 403 %s", tc.path, status, raw, tc.code)
		}
	}
	if status, raw := call(t, http.MethodGet, e.srv.URL+"/api/messages?chat="+allowedChat, nil, "X-Api-Key: "+reader); status != http.StatusOK {
		t.Errorf("its own chat: %d %s", status, raw)
	}
	// The Cloud door reads media through the same check: GET needs read.
	status, raw := call(t, http.MethodGet, e.srv.URL+"/v21.0/med_0123456789abcdef0123456789abcdef", nil, "Authorization: Bearer "+sender)
	if g := graphError(t, raw); status != http.StatusForbidden || g.Error.MsgbridgeCode != bridge.CodeScopeMissing {
		t.Errorf("Cloud GET with a send-only key: %d %s", status, raw)
	}
}

// GET /api/events sends a key with an allowlist its chats' events only
// (and the link's state); API_KEY gets them all.
func TestScopedKeyEventStream(t *testing.T) {
	e := newKeysEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = e.outbox.Run(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })
	reader := e.createKey(t, `{"name":"reader","scopes":["read"],"chats":["`+allowedChat+`"]}`)
	mine := openStreamWithKey(t, e.srv.URL+"/api/events", reader)
	all := openStreamWithKey(t, e.srv.URL+"/api/events", testAPIKey)
	for i, chat := range []string{otherChat, allowedChat, otherChat} {
		in := bridge.Incoming{WhatsAppID: "W" + string(rune('0'+i)), From: bridge.PhoneRecipient(chat), Chat: bridge.PhoneRecipient(chat),
			Type: "text", Text: "hi", Timestamp: time.Now()}
		if err := e.outbox.EnqueueNow(context.Background(), webhook.MessageUpsert(in)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		all.next(t)
	}
	// The stream reads the log in order: the key's one event comes, and
	// the third event (after it) was seen by the stream before the next.
	if ev := mine.next(t); !strings.Contains(ev.data, `"W1"`) {
		t.Errorf("the key's stream sent %s", ev.data)
	}
	if err := e.outbox.EnqueueNow(context.Background(), webhook.MessageUpsert(bridge.Incoming{WhatsAppID: "W9",
		From: bridge.PhoneRecipient(allowedChat), Chat: bridge.PhoneRecipient(allowedChat), Type: "text", Text: "again", Timestamp: time.Now()})); err != nil {
		t.Fatal(err)
	}
	if ev := mine.next(t); !strings.Contains(ev.data, `"W9"`) {
		t.Errorf("after its event the key's stream sent %s, want W9 (W2 is another chat's)", ev.data)
	}
}

// openStreamWithKey is openStream with another key.
func openStreamWithKey(t *testing.T, url, key string) *sseClient {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", key)
	resp, err := http.DefaultClient.Do(req) //nolint:bodyclose // closed by cut at the test's end
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	c := &sseClient{resp: resp, events: make(chan sseEvent, 1000), lines: make(chan string, 100)}
	t.Cleanup(c.cut)
	go c.read()
	return c
}

// A key over its hourly budget is refused with 429 and Retry-After, and
// nothing more is stored.
func TestKeyBudget(t *testing.T) {
	e := newKeysEnv(t)
	key := e.createKey(t, `{"name":"bot","scopes":["send"],"budget":1}`)
	if status, raw := e.postJSON(t, key, allowedChat); status >= 300 {
		t.Fatalf("first send: %d %s", status, raw)
	}
	resp := do(t, http.MethodPost, e.srv.URL+"/api/messages", strings.NewReader(`{"to":"`+allowedChat+`","type":"text","text":"more"}`),
		"X-Api-Key: "+key, "Content-Type: application/json")
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("over the budget: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if status, raw := e.postJSON(t, testAPIKey, allowedChat); status >= 300 {
		t.Errorf("API_KEY has no budget: %d %s", status, raw)
	}
}

// Keys are created (the secret answered once), listed without secrets,
// and revoked at once; the admin API validates strictly; a named key's
// uses are audited under its name.
func TestAdminKeys(t *testing.T) {
	e := newKeysEnv(t)
	key := e.createKey(t, `{"name":"assistant","scopes":["read","mcp"],"chats":["`+allowedChat+`"],"budget":5,"expires_at":"2099-01-01T00:00:00Z","approval":true}`)
	status, raw := call(t, http.MethodGet, e.srv.URL+"/api/admin/keys", nil, "X-Admin-Token: "+testAdminToken)
	if status != http.StatusOK || strings.Contains(raw, key) || !strings.Contains(raw, `"assistant"`) || !strings.Contains(raw, `"approval":true`) {
		t.Errorf("list: %d %s", status, raw)
	}
	if status, raw := call(t, http.MethodGet, e.srv.URL+"/api/messages?chat="+allowedChat, nil, "X-Api-Key: "+key); status != http.StatusOK {
		t.Fatalf("the new key: %d %s", status, raw)
	}
	for _, tc := range []struct{ body, code string }{
		{`{"name":"Bad Name","scopes":["read"]}`, bridge.CodeInvalidKeyName},
		{`{"name":"x","scopes":["admin"]}`, bridge.CodeInvalidKeyScope},
		{`{"name":"x","scopes":["read"],"chats":["nope"]}`, bridge.CodeInvalidKeyChat},
		{`{"name":"x","scopes":["read"],"budget":-1}`, bridge.CodeInvalidKeyBudget},
		{`{"name":"x","scopes":["read"],"expires_at":"tomorrow"}`, bridge.CodeInvalidKeyExpiry},
		{`{"name":"x","scopes":["read"],"expires_at":"2001-01-01T00:00:00Z"}`, bridge.CodeInvalidKeyExpiry},
		{`{"name":"x","scopes":["read"],"key":"chosen-by-me-0123456789"}`, bridge.CodeInvalidKeySecret},
		{`{"name":"x","scopes":["read"],"extra":1}`, bridge.CodeInvalidJSON},
	} {
		status, raw := call(t, http.MethodPost, e.srv.URL+"/api/admin/keys", strings.NewReader(tc.body),
			"X-Admin-Token: "+testAdminToken, "Content-Type: application/json")
		if status != http.StatusBadRequest || errorCode(t, raw) != tc.code {
			t.Errorf("%s: %d %s, want %s", tc.body, status, raw, tc.code)
		}
	}
	status, raw = call(t, http.MethodPost, e.srv.URL+"/api/admin/keys", strings.NewReader(`{"name":"assistant","scopes":["read"]}`),
		"X-Admin-Token: "+testAdminToken, "Content-Type: application/json")
	if status != http.StatusConflict || errorCode(t, raw) != bridge.CodeKeyExists {
		t.Errorf("a name twice: %d %s", status, raw)
	}
	if status, raw := call(t, http.MethodDelete, e.srv.URL+"/api/admin/keys/assistant", nil, "X-Admin-Token: "+testAdminToken); status != http.StatusOK {
		t.Fatalf("revoke: %d %s", status, raw)
	}
	if status, raw := call(t, http.MethodGet, e.srv.URL+"/api/messages?chat="+allowedChat, nil, "X-Api-Key: "+key); status != http.StatusUnauthorized {
		t.Errorf("revoked key: %d %s", status, raw)
	}
	if status, raw := call(t, http.MethodDelete, e.srv.URL+"/api/admin/keys/assistant", nil, "X-Admin-Token: "+testAdminToken); status != http.StatusNotFound || errorCode(t, raw) != bridge.CodeKeyNotFound {
		t.Errorf("revoke twice: %d %s", status, raw)
	}
	records, err := e.audit.List(context.Background(), audit.WeekOf(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	var used, created, revoked bool
	for _, r := range records {
		used = used || r.Action == audit.ActionKeyUse && strings.Contains(r.Detail, "key assistant: GET /api/messages")
		created = created || r.Action == audit.ActionKeyCreate
		revoked = revoked || r.Action == audit.ActionKeyRevoke
	}
	if !used || !created || !revoked {
		t.Errorf("audit: use %v, create %v, revoke %v in %+v", used, created, revoked, records)
	}
}

// The operator's push: PUT stores a key with the secret it gives, which
// then works; a name made through POST is not taken over.
func TestAdminPutKey(t *testing.T) {
	e := newKeysEnv(t)
	put := func(name, body string) (int, string) {
		return call(t, http.MethodPut, e.srv.URL+"/api/admin/keys/"+url.PathEscape(name), strings.NewReader(body),
			"X-Admin-Token: "+testAdminToken, "Content-Type: application/json")
	}
	if status, raw := put("crm", `{"scopes":["send"],"key":"crm-secret-0123456789"}`); status != http.StatusOK || !strings.Contains(raw, `"source":"resource"`) {
		t.Fatalf("put: %d %s", status, raw)
	}
	if status, raw := e.postJSON(t, "crm-secret-0123456789", allowedChat); status >= 300 {
		t.Errorf("the pushed key: %d %s", status, raw)
	}
	e.createKey(t, `{"name":"byhand","scopes":["read"]}`)
	if status, raw := put("byhand", `{"scopes":["send"],"key":"other-secret-0123456789"}`); status != http.StatusConflict {
		t.Errorf("put over a key made by hand: %d %s", status, raw)
	}
}

// A key with approval: its send is answered 202 AwaitingApproval and
// nothing is sent; listed under /api/admin/approvals, approved, it is
// sent; a second one rejected is Failed and never sent.
func TestKeyWithApprovalWaitsForAPerson(t *testing.T) {
	e := newKeysEnv(t)
	key := e.createKey(t, `{"name":"assistant","scopes":["send"],"approval":true}`)
	status, raw := e.postJSON(t, key, allowedChat)
	if status != http.StatusAccepted || !strings.Contains(raw, `"status":"AwaitingApproval"`) {
		t.Fatalf("held send: %d %s", status, raw)
	}
	status, raw = call(t, http.MethodGet, e.srv.URL+"/api/admin/approvals", nil, "X-Admin-Token: "+testAdminToken)
	var held struct {
		Messages []struct{ ID, Text string } `json:"messages"`
	}
	if err := json.Unmarshal([]byte(raw), &held); err != nil || status != http.StatusOK || len(held.Messages) != 1 || held.Messages[0].Text != "hello" {
		t.Fatalf("approvals: %d %s", status, raw)
	}
	if n := len(e.sender.outgoing()); n != 0 {
		t.Fatalf("%d sent before approval", n)
	}
	id := held.Messages[0].ID
	if status, raw := call(t, http.MethodPost, e.srv.URL+"/api/admin/approvals/"+id+"/approve", nil, "X-Admin-Token: "+testAdminToken); status != http.StatusOK {
		t.Fatalf("approve: %d %s", status, raw)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return len(e.sender.outgoing()) == 1 }, "the approved send")
	if status, raw := call(t, http.MethodPost, e.srv.URL+"/api/admin/approvals/"+id+"/reject", nil, "X-Admin-Token: "+testAdminToken); status != http.StatusConflict || errorCode(t, raw) != bridge.CodeNotAwaitingApproval {
		t.Errorf("reject after approval: %d %s", status, raw)
	}
	e.postJSON(t, key, allowedChat)
	_, raw = call(t, http.MethodGet, e.srv.URL+"/api/admin/approvals", nil, "X-Admin-Token: "+testAdminToken)
	if err := json.Unmarshal([]byte(raw), &held); err != nil || len(held.Messages) != 1 {
		t.Fatalf("approvals: %s", raw)
	}
	status, raw = call(t, http.MethodPost, e.srv.URL+"/api/admin/approvals/"+held.Messages[0].ID+"/reject", nil, "X-Admin-Token: "+testAdminToken)
	if status != http.StatusOK || !strings.Contains(raw, `"status":"Failed"`) || !strings.Contains(raw, bridge.FailApprovalRejected) {
		t.Errorf("reject: %d %s", status, raw)
	}
	if status, raw := call(t, http.MethodPost, e.srv.URL+"/api/admin/approvals/nope/approve", nil, "X-Admin-Token: "+testAdminToken); status != http.StatusNotFound {
		t.Errorf("unknown id: %d %s", status, raw)
	}
	if n := len(e.sender.outgoing()); n != 1 {
		t.Errorf("%d sent, want the approved one only", n)
	}
}

// A read mark is a write into a chat: a key allowed other chats marks
// nothing, through the JSON API (the chat in the path) or the Cloud door
// (the chat the received message's id names).
func TestScopedKeyReadMarks(t *testing.T) {
	e := newKeysEnv(t)
	key := e.createKey(t, `{"name":"marker","scopes":["send"],"chats":["`+allowedChat+`"]}`)
	status, raw := call(t, http.MethodPost, e.srv.URL+"/api/chats/"+historyAlice.String()+"/read", strings.NewReader(`{"message_id":"3A0123"}`),
		"X-Api-Key: "+key, "Content-Type: application/json")
	if status != http.StatusForbidden || errorCode(t, raw) != bridge.CodeChatNotAllowed {
		t.Errorf("JSON read mark: %d %s", status, raw)
	}
	status, raw = call(t, http.MethodPost, e.srv.URL+"/v21.0/4915100000001/messages",
		strings.NewReader(`{"messaging_product":"whatsapp","status":"read","message_id":"3A0123"}`),
		"Authorization: Bearer "+key, "Content-Type: application/json")
	if g := graphError(t, raw); status != http.StatusForbidden || g.Error.MsgbridgeCode != bridge.CodeChatNotAllowed {
		t.Errorf("Cloud read mark: %d %s", status, raw)
	}
}
