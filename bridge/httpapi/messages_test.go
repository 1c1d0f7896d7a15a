package httpapi

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

func newMessagesEnv(t *testing.T) (string, *fakeMessages) {
	t.Helper()
	created := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	q := &fakeMessages{next: "c2", log: []bridge.Message{
		{ID: "m1", WhatsAppID: "W1", Recipient: bridge.PhoneRecipient("4915100000002"), Type: "text", Status: bridge.StatusRead,
			Attempts: 1, CreatedAt: created, UpdatedAt: created.Add(time.Minute)},
		{ID: "m2", WhatsAppID: "W2", Recipient: bridge.Recipient{Kind: bridge.RecipientGroup, ID: "120363025246125486"}, Type: "image", Status: bridge.StatusFailed,
			RetryCount: 3, Attempts: 4, LastError: "no linked session", CreatedAt: created, UpdatedAt: created},
	}}
	srv := newTestServer(t, testDeps{Messages: q})
	return srv.URL, q
}

func TestGetMessage(t *testing.T) {
	base, _ := newMessagesEnv(t)
	key := "X-Api-Key: " + testAPIKey
	status, body := call(t, "GET", base+"/api/messages/m1", nil, key)
	want := `{"id":"m1","whatsapp_id":"W1","recipient":"4915100000002@s.whatsapp.net","type":"text","status":"Read",` +
		`"retry_count":0,"attempts":1,"last_error":"","created_at":"2026-11-21T10:00:00Z","updated_at":"2026-11-21T10:01:00Z"}` + "\n"
	if status != 200 || body != want {
		t.Errorf("get: %d %s\nwant %s", status, body, want)
	}
	if status, body := call(t, "GET", base+"/api/messages/nope?apiKey="+testAPIKey, nil); status != 404 || errorCode(t, body) != "not_found" {
		t.Errorf("unknown id: %d %s", status, body)
	}
	for _, headers := range [][]string{nil, {"X-Api-Key: wrong"}, {adminHeader}} {
		if status, body := call(t, "GET", base+"/api/messages/m1", nil, headers...); status != 401 || errorCode(t, body) != "unauthorized" {
			t.Errorf("%v: %d %s", headers, status, body)
		}
	}
}

// A message is found by its whatsapp_id too: the id the Cloud API door
// answers a send with.
func TestGetMessageByWhatsAppID(t *testing.T) {
	q := &fakeMessages{log: []bridge.Message{{ID: "m1", WhatsAppID: "3EB0AA", Recipient: bridge.PhoneRecipient("4915100000002"),
		Type: "text", Status: bridge.StatusSent}}}
	srv := newTestServer(t, testDeps{Messages: q, Targets: fakeTargets{log: q.log}})
	status, body := call(t, "GET", srv.URL+"/api/messages/3EB0AA", nil, "X-Api-Key: "+testAPIKey)
	if status != 200 || !strings.HasPrefix(body, `{"id":"m1","whatsapp_id":"3EB0AA"`) {
		t.Errorf("by whatsapp_id: %d %s", status, body)
	}
}

func TestListMessages(t *testing.T) {
	base, q := newMessagesEnv(t)
	key := "X-Api-Key: " + testAPIKey
	status, body := call(t, "GET", base+"/api/messages?status=Failed&chat=120363025246125486@g.us&since=2026-11-21T09:00:00%2B01:00&limit=2&cursor=c1", nil, key)
	if status != 200 || !strings.HasPrefix(body, `{"messages":[{"id":"m1",`) ||
		!strings.Contains(body, `"recipient":"120363025246125486@g.us"`) || !strings.HasSuffix(body, `"next_cursor":"c2"}`+"\n") {
		t.Fatalf("list: %d %s", status, body)
	}
	f := q.filters[0]
	if f.Status != bridge.StatusFailed || f.Chat != (bridge.Recipient{Kind: bridge.RecipientGroup, ID: "120363025246125486"}) || !f.Since.Equal(time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)) || f.Limit != 2 || f.Cursor != "c1" {
		t.Errorf("filter %+v", f)
	}
	// Defaults; the key in the query is not a filter.
	if status, _ := call(t, "GET", base+"/api/messages?apiKey="+testAPIKey, nil); status != 200 ||
		fmt.Sprintf("%+v", q.filters[1]) != fmt.Sprintf("%+v", sendqueue.Filter{Limit: messaging.DefaultPageSize}) {
		t.Errorf("defaults: %d %+v", status, q.filters[1])
	}
	// The status a send answered filters in any case.
	for i, v := range []string{"queued", "QUEUED", "Queued"} {
		if status, body := call(t, "GET", base+"/api/messages?status="+v, nil, key); status != 200 || q.filters[2+i].Status != bridge.StatusQueued {
			t.Errorf("status=%s: %d %s", v, status, body)
		}
	}
	// The last page has no cursor, and an empty one is [] not null.
	q.log, q.next = nil, ""
	if _, body := call(t, "GET", base+"/api/messages", nil, key); body != `{"messages":[]}`+"\n" {
		t.Errorf("empty page: %s", body)
	}
}

func TestListMessagesBadParameters(t *testing.T) {
	base, q := newMessagesEnv(t)
	key := "X-Api-Key: " + testAPIKey
	for query, code := range map[string]string{
		"status=Queue":           "invalid_status",
		"status=Nope":            "invalid_status",
		"since=yesterday":        "invalid_since",
		"since=2026-11-21":       "invalid_since",
		"limit=0":                "invalid_limit",
		"limit=501":              "invalid_limit",
		"limit=x":                "invalid_limit",
		"limit=1&limit=2":        "invalid_query",
		"order=asc":              "invalid_query",
		"status=Read&statuses=x": "invalid_query",
		"chat=":                  "invalid_chat",
		"chat=alice":             "invalid_chat",
		"chat=49%20151%20123":    "invalid_chat",
		"chat=123@broadcast":     "invalid_chat",
		"chat=%2B49&chat=%2B49":  "invalid_query",
	} {
		if status, body := call(t, "GET", base+"/api/messages?"+query, nil, key); status != 400 || errorCode(t, body) != code {
			t.Errorf("%s: %d %s, want 400 %s", query, status, body, code)
		}
	}
	if len(q.filters) != 0 {
		t.Errorf("invalid queries reached the log: %v", q.filters)
	}
	q.listErr = bridge.Invalid("invalid_cursor", "cursor is not one this API returned")
	if status, body := call(t, "GET", base+"/api/messages?cursor=forged", nil, key); status != 400 || errorCode(t, body) != "invalid_cursor" {
		t.Errorf("bad cursor: %d %s", status, body)
	}
	q.listErr = bridge.Internal("read_failed", "the message log could not be read", errors.New("database disk image is malformed"))
	if status, body := call(t, "GET", base+"/api/messages", nil, key); status != 500 || errorCode(t, body) != "read_failed" ||
		strings.Contains(body, "malformed") {
		t.Errorf("failing log: %d %s", status, body)
	}
	if status, body := call(t, "GET", base+"/api/messages/m9", nil, key); status != 500 || errorCode(t, body) != "read_failed" {
		t.Errorf("failing get: %d %s", status, body)
	}
}
