package httpapi

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/inbox"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// historyEnv is the API over a real incoming history on a real bridge.db,
// with a real outbox (not delivering) behind it.
type historyEnv struct {
	srv     *httptest.Server
	db      *sql.DB
	batcher *sqlite.Batcher
	inbox   *inbox.Inbox
	clock   *clocktesting.FakeClock
	audit   *audit.Trail
}

func newHistoryEnv(t *testing.T, webhookURL string) *historyEnv {
	t.Helper()
	db := testutil.OpenBridgeDB(t)
	b := sqlite.NewBatcher(db)
	t.Cleanup(b.Close)
	e := &historyEnv{db: db, batcher: b, clock: clocktesting.NewFakeClock(saturday)}
	outbox := webhook.New(webhook.Options{DB: db, Batcher: b, URL: webhookURL, Log: logr.Discard(), LocalTargets: true})
	e.inbox = inbox.New(inbox.Options{DB: db, Batcher: b, Webhooks: outbox, Retention: time.Hour, Now: e.clock.Now})
	e.audit = openAuditLog(t, e.clock.Now)
	e.srv = newTestServer(t, testDeps{Now: e.clock.Now, Inbox: e.inbox, Messages: &fakeMessages{},
		Audit: AuditRecorder{Trail: e.audit, Logger: logr.Discard()}})
	return e
}

// receive stores in as received now.
func (e *historyEnv) receive(t *testing.T, in bridge.Incoming) {
	t.Helper()
	if err := e.batcher.Do(context.Background(), func(tx *sql.Tx) error { return e.inbox.Store(context.Background(), tx, in) }); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(time.Second)
}

var (
	hiddenSender = bridge.Recipient{Kind: bridge.RecipientLID, ID: "99887766"}
	knownSender  = bridge.PhoneRecipient("4915112345678")
)

// receiveConversation stores a text from a hidden number, a location from
// a known one and a reaction: three entries, a second apart.
func (e *historyEnv) receiveConversation(t *testing.T) {
	t.Helper()
	at := saturday.Add(-time.Minute)
	e.receive(t, bridge.Incoming{WhatsAppID: "W1", From: hiddenSender, FromLID: hiddenSender, Chat: hiddenSender,
		PushName: "Ana", Type: "text", Text: "hi <there>", Timestamp: at})
	e.receive(t, bridge.Incoming{WhatsAppID: "W2", From: knownSender, FromLID: hiddenSender, FromPhone: knownSender,
		Chat: knownSender, Type: "location", Timestamp: at, Location: &bridge.Location{Latitude: 52.5, Longitude: 13.4}})
	e.receive(t, bridge.Incoming{WhatsAppID: "W3", From: knownSender, FromPhone: knownSender, Chat: knownSender,
		Type: bridge.IncomingReaction, TargetID: "W2", Emoji: "👍", Timestamp: at})
}

type incomingPage struct {
	Messages   []map[string]any `json:"messages"`
	NextCursor string           `json:"next_cursor"`
}

func (e *historyEnv) list(t *testing.T, query string) incomingPage {
	t.Helper()
	status, body := call(t, "GET", e.srv.URL+"/api/messages?"+query, nil, "X-Api-Key: "+testAPIKey)
	if status != http.StatusOK {
		t.Fatalf("%s: %d %s", query, status, body)
	}
	var p incomingPage
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// direction=in lists what was received, newest first, page by page, each
// entry with its fields and its webhook event (validated against the API
// description by the client).
func TestListIncoming(t *testing.T) {
	e := newHistoryEnv(t, "")
	e.receiveConversation(t)
	first := e.list(t, "direction=in&limit=2")
	if len(first.Messages) != 2 || first.NextCursor == "" {
		t.Fatalf("first page %+v", first)
	}
	second := e.list(t, "direction=in&limit=2&cursor="+url.QueryEscape(first.NextCursor))
	if len(second.Messages) != 1 || second.NextCursor != "" {
		t.Fatalf("second page %+v", second)
	}
	all := slices.Concat(first.Messages, second.Messages)
	var order []string
	for _, m := range all {
		order = append(order, m["whatsapp_id"].(string))
	}
	if strings.Join(order, ",") != "W3,W2,W1" {
		t.Errorf("order %v, want newest first", order)
	}
	hidden := all[2]
	if hidden["from"] != "99887766@lid" || hidden["from_lid"] != "99887766@lid" || hidden["from_phone"] != nil ||
		hidden["event"] != "message.upsert" || hidden["type"] != "text" || hidden["text"] != "hi <there>" ||
		hidden["received_at"] != "2026-11-21T12:00:00.000Z" || hidden["timestamp"] != "2026-11-21T11:59:00.000Z" ||
		hidden["payload"].(map[string]any)["text"] != "hi <there>" || !strings.HasPrefix(hidden["webhook_id"].(string), "msg_") {
		t.Errorf("hidden sender's text %+v", hidden)
	}
	if r := all[0]; r["event"] != "message.reaction" || r["type"] != "reaction" || r["payload"].(map[string]any)["target_id"] != "W2" {
		t.Errorf("reaction %+v", r)
	}
	if since := e.list(t, "direction=in&since=2026-11-21T12:00:01Z"); len(since.Messages) != 2 {
		t.Errorf("since the second entry: %d entries", len(since.Messages))
	}
	if empty := e.list(t, "direction=in&since=2026-11-22T00:00:00Z"); empty.Messages == nil || len(empty.Messages) != 0 {
		t.Errorf("an empty page: %+v", empty)
	}
	// A chat however it is spelled, its entries only.
	for query, want := range map[string]string{
		"chat=%2B4915112345678": "W3,W2", "chat=4915112345678@s.whatsapp.net": "W3,W2", "chat=99887766@lid": "W1", "chat=4915100000000": "",
	} {
		var ids []string
		for _, m := range e.list(t, "direction=in&"+query).Messages {
			ids = append(ids, m["whatsapp_id"].(string))
		}
		if got := strings.Join(ids, ","); got != want {
			t.Errorf("%s: %q, want %q", query, got, want)
		}
	}
	// The default is the outgoing log.
	if out := e.list(t, "direction=out"); len(out.Messages) != 0 {
		t.Errorf("direction=out listed the history: %+v", out)
	}
}

// The history's own refusals: a status, a cursor of the other direction.
func TestListIncomingBadParameters(t *testing.T) {
	e := newHistoryEnv(t, "")
	for query, code := range map[string]string{
		"direction=sideways":         "invalid_direction",
		"direction=IN":               "invalid_direction",
		"direction=":                 "invalid_direction",
		"direction=in&direction=out": "invalid_query",
		"direction=in&status=Read":   "invalid_status",
		"direction=in&cursor=" + bridge.EncodeCursor(1, "01a1feec-dd6c-7c06-8391-dc126fc74f67"): "invalid_cursor",
		"direction=in&cursor=":         "invalid_cursor",
		"direction=in&limit=501":       "invalid_limit",
		"direction=in&since=yesterday": "invalid_since",
		"direction=in&order=asc":       "invalid_query",
	} {
		if status, body := call(t, "GET", e.srv.URL+"/api/messages?"+query, nil, "X-Api-Key: "+testAPIKey); status != 400 || errorCode(t, body) != code {
			t.Errorf("%s: %d %s, want 400 %s", query, status, body, code)
		}
	}
	if status, body := call(t, "GET", e.srv.URL+"/api/messages?direction=in", nil, adminHeader); status != 401 || errorCode(t, body) != "unauthorized" {
		t.Errorf("without the API key: %d %s", status, body)
	}
}

func (e *historyEnv) replay(t *testing.T, query string) (int, string) {
	t.Helper()
	return call(t, "POST", e.srv.URL+"/api/admin/webhooks/replay"+query, nil, adminHeader)
}

// markDelivered ends every pending event, as a delivery would.
func (e *historyEnv) markDelivered(t *testing.T) {
	t.Helper()
	if _, err := e.db.Exec(`UPDATE webhook_outbox SET status = 'delivered', delivered_at = 1`); err != nil {
		t.Fatal(err)
	}
}

// A replay enqueues the events received since the given time, once even
// when asked twice; every call is audited.
func TestReplayEndpoint(t *testing.T) {
	e := newHistoryEnv(t, "http://127.0.0.1:1/hook")
	e.receiveConversation(t)
	status, body := e.replay(t, "?since=2026-11-21T12:00:00Z")
	if status != 200 || body != `{"already_pending":3,"enqueued":0,"since":"2026-11-21T12:00:00.000Z"}`+"\n" {
		t.Fatalf("replay of pending events: %d %s", status, body)
	}
	e.markDelivered(t)
	status, body = e.replay(t, "?since=2026-11-21T13:00:01%2B01:00")
	if status != 200 || body != `{"already_pending":0,"enqueued":2,"since":"2026-11-21T12:00:01.000Z"}`+"\n" {
		t.Fatalf("replay: %d %s", status, body)
	}
	if status, body = e.replay(t, "?since=2026-11-21T12:00:01Z"); status != 200 || !strings.Contains(body, `"already_pending":2,"enqueued":0`) {
		t.Errorf("a replay of a replay: %d %s", status, body)
	}
	var got []string
	entries, err := e.audit.List(context.Background(), audit.WeekOf(saturday))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range entries {
		got = append(got, string(a.Action)+" "+string(a.Outcome))
	}
	if want := "[webhooks.replay success webhooks.replay success webhooks.replay success]"; fmt.Sprint(got) != want {
		t.Errorf("audit %v, want %s", got, want)
	}
}

// Bad replays: each refusal has its code and is audited as rejected; with
// webhooks off it is a conflict; without the token, 401 and no record.
func TestReplayEndpointRefusals(t *testing.T) {
	e := newHistoryEnv(t, "http://127.0.0.1:1/hook")
	for query, code := range map[string]string{
		"":                                "invalid_since",
		"?since=":                         "invalid_since",
		"?since=yesterday":                "invalid_since",
		"?since=2026-11-21":               "invalid_since",
		"?since=2026-11-21T12:00:00.001Z": "invalid_since", // after the clock's now
		"?since=2027-01-01T00:00:00Z":     "invalid_since",
		"?since=2026-11-21T10:00:00Z&x=1": "invalid_query",
		"?since=2026-11-21T10:00:00Z&since=2026-11-21T10:00:00Z": "invalid_query",
		"?since=%zz": "invalid_query",
	} {
		if status, body := e.replay(t, query); status != 400 || errorCode(t, body) != code {
			t.Errorf("%q: %d %s, want 400 %s", query, status, body, code)
		}
	}
	off := newHistoryEnv(t, "")
	if status, body := off.replay(t, "?since=2026-11-21T10:00:00Z"); status != 409 || errorCode(t, body) != "webhooks_off" {
		t.Errorf("webhooks off: %d %s", status, body)
	}
	if status, _ := call(t, "POST", e.srv.URL+"/api/admin/webhooks/replay?since=2026-11-21T10:00:00Z", nil); status != 401 {
		t.Errorf("without a token: %d", status)
	}
	entries, err := e.audit.List(context.Background(), audit.WeekOf(saturday))
	if err != nil {
		t.Fatal(err)
	}
	rejected := 0
	for _, a := range entries {
		if a.Action == audit.ActionWebhookReplay && a.Outcome == audit.OutcomeRejected {
			rejected++
		}
	}
	if rejected != 9 {
		t.Errorf("%d rejected replays audited, want 9: %v", rejected, entries)
	}
}
