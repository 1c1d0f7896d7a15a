package process

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// incomingEntry is an entry of GET /api/messages?direction=in.
type incomingEntry struct {
	WebhookID  string          `json:"webhook_id"`
	Event      string          `json:"event"`
	WhatsAppID string          `json:"whatsapp_id"`
	From       string          `json:"from"`
	Text       string          `json:"text"`
	Payload    json.RawMessage `json:"payload"`
}

type incomingPage struct {
	Messages   []incomingEntry `json:"messages"`
	NextCursor string          `json:"next_cursor"`
}

// history reads the whole incoming history, limit entries a page.
func history(t testing.TB, p *bridgeProcess, limit int) []incomingEntry {
	t.Helper()
	var all []incomingEntry
	cursor := ""
	for range 100 {
		q := fmt.Sprintf("direction=in&limit=%d&apiKey=%s", limit, testAPIKey)
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		var page incomingPage
		if code, body := request(t, http.MethodGet, "http://"+p.addr+"/api/messages?"+q, "", "", "", &page); code != http.StatusOK {
			t.Fatalf("history: %d %s", code, body)
		}
		all = append(all, page.Messages...)
		if cursor = page.NextCursor; cursor == "" {
			return all
		}
	}
	t.Fatal("the history's paging does not end")
	return nil
}

// writeTo has contact write text to the bridge's account and returns the
// message's id.
func writeTo(t testing.TB, contact *wasim.User, text string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id, err := contact.SendText(ctx, types.NewJID(testAccount, types.DefaultUserServer), text)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A contact whose number WhatsApp hides, and one whose number it gives
// beside the LID, write in; the backend answers the `from` of each
// message.upsert through POST /send, and the contact's phone decrypts the
// answer. The history shows the same `from`.
func TestRepliesToLIDSendersReachThem(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := linkedBridge(t, sim, t.TempDir(), hooks.env()...)
	for _, c := range []struct {
		name, number string
		mode         wasim.Addressing
		hidden       bool
	}{
		{"hidden number", "4915100000007", wasim.AddressLIDHidden, true},
		{"known number", "4915100000008", wasim.AddressLIDWithPhone, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			contact := sim.Contact(c.number, c.name)
			contact.SetAddressing(c.mode)
			id := writeTo(t, contact, "who answers me?")
			up := hooks.wait("message.upsert "+id, func(e hookEvent) bool { return e.str("whatsapp_id") == id })
			from, lid := up.str("from"), contact.LID().User+"@lid"
			if up.str("from_lid") != lid || (c.hidden && (from != lid || up.Payload["from_phone"] != nil)) ||
				(!c.hidden && (from != c.number || up.str("from_phone") != c.number)) {
				t.Fatalf("upsert %+v", up.Payload)
			}
			code, raw := sendText(t, p, from, "you wrote as "+from)
			if code != http.StatusOK {
				t.Fatalf("reply to %s: %d %s", from, code, raw)
			}
			reply := receive(t, contact, decode[sendResponse](t, raw).Messages[0].WhatsAppID)
			if reply.Text() != "you wrote as "+from {
				t.Errorf("the contact read %q", reply.Text())
			}
			entries := history(t, p, 50)
			if len(entries) == 0 || entries[0].WhatsAppID != id || entries[0].From != from || entries[0].WebhookID != up.ID {
				t.Errorf("history %+v, want %s from %s under %s first", entries, id, from, up.ID)
			}
		})
	}
}

// A contact's texts are listed newest first page by page; a replay since
// before the first delivers each again with its original webhook-id and
// body to the receiver (which validates every delivery against the API
// description), and it is audited.
func TestIncomingHistoryAndReplay(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := linkedBridge(t, sim, t.TempDir(), hooks.env()...)
	since := time.Now().UTC().Truncate(time.Second)
	contact := sim.Contact(alice, "Alice")
	var ids []string
	for i := range 5 {
		ids = append(ids, writeTo(t, contact, fmt.Sprintf("text %d", i)))
	}
	first := map[string]hookEvent{} // by webhook-id
	for _, id := range ids {
		e := hooks.wait("message.upsert "+id, func(e hookEvent) bool { return e.str("whatsapp_id") == id })
		first[e.ID] = e
	}
	entries := history(t, p, 2)
	if len(entries) != len(ids) {
		t.Fatalf("history has %d entries, want %d", len(entries), len(ids))
	}
	for i, e := range entries {
		if want := ids[len(ids)-1-i]; e.WhatsAppID != want || first[e.WebhookID].str("whatsapp_id") != want {
			t.Errorf("position %d: %+v, want %s newest first under its webhook-id", i, e, want)
		}
	}

	// An event the receiver has is pending until the bridge records its
	// answer; a replay leaves a pending event alone.
	waitWebhooksDrained(t, p)
	var replayed struct{ Enqueued, AlreadyPending int }
	before := len(hooks.all())
	code, body := request(t, http.MethodPost, "http://"+p.addr+"/api/admin/webhooks/replay?since="+url.QueryEscape(since.Format(time.RFC3339)),
		testAdminToken, "", "", &replayed)
	if code != http.StatusOK || replayed.Enqueued != len(ids) {
		t.Fatalf("replay: %d %s", code, body)
	}
	again := testutil.Poll(t, 30*time.Second, func() ([]hookEvent, bool) {
		all := hooks.all()[before:]
		return all, len(all) >= len(ids)
	}, "replayed deliveries")
	for _, e := range again {
		orig, ok := first[e.ID]
		b1, _ := json.Marshal(orig.Payload)
		b2, _ := json.Marshal(e.Payload)
		if !ok || string(b1) != string(b2) {
			t.Errorf("replayed %s %s; first delivered as %s", e.ID, b2, b1)
		}
	}
	if _, body := request(t, http.MethodGet, "http://"+p.addr+"/api/admin/audit", testAdminToken, "", "", nil); !strings.Contains(body, `"action":"webhooks.replay","outcome":"success"`) {
		t.Errorf("replay not audited: %s", body)
	}
}

// With a short INBOX_RETENTION the history empties on its own.
func TestInboxRetentionSweeps(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir(), "INBOX_RETENTION=2s")
	id := writeTo(t, sim.Contact(alice, "Alice"), "soon gone")
	testutil.Poll(t, 20*time.Second, func() ([]incomingEntry, bool) {
		h := history(t, p, 10)
		return h, len(h) == 1 && h[0].WhatsAppID == id
	}, "the message in the history")
	stored := time.Now()
	testutil.Poll(t, 20*time.Second, func() ([]incomingEntry, bool) {
		h := history(t, p, 10)
		return h, len(h) == 0
	}, "the history after the retention")
	t.Logf("swept %s after it was listed (retention 2s, a sweep every second)", time.Since(stored).Round(100*time.Millisecond))
}
