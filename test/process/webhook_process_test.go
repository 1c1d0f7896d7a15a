package process

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

var testWebhookSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

// hookEvent is one verified delivery.
type hookEvent struct {
	ID      string
	Payload map[string]any
}

func (e hookEvent) str(k string) string { s, _ := e.Payload[k].(string); return s }

// hookReceiver verifies every delivery with the Standard Webhooks library
// and records the accepted ones; while failing it answers 500.
type hookReceiver struct {
	t       testing.TB
	srv     *httptest.Server
	failing atomic.Bool
	mu      sync.Mutex
	events  []hookEvent
}

func newHookReceiver(t testing.TB) *hookReceiver {
	wh, err := standardwebhooks.NewWebhook(testWebhookSecret)
	if err != nil {
		t.Fatal(err)
	}
	r := &hookReceiver{t: t}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		apitest.ValidateWebhookRequest(t, req, body)
		if err := wh.Verify(body, req.Header); err != nil {
			t.Errorf("delivery does not verify: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if r.failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		var p map[string]any
		if err := json.Unmarshal(body, &p); err != nil {
			t.Errorf("body %q: %v", body, err)
		}
		r.mu.Lock()
		r.events = append(r.events, hookEvent{ID: req.Header.Get("webhook-id"), Payload: p})
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) env() []string {
	return []string{"WEBHOOK_URL=" + r.srv.URL + "/hook", "WEBHOOK_SECRET=" + testWebhookSecret}
}

func (r *hookReceiver) all() []hookEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookEvent(nil), r.events...)
}

// wait waits until some delivered event satisfies ok.
func (r *hookReceiver) wait(what string, ok func(hookEvent) bool) hookEvent {
	r.t.Helper()
	all := testutil.Poll(r.t, 30*time.Second, func() ([]hookEvent, bool) {
		all := r.all()
		return all, slices.ContainsFunc(all, ok)
	}, "no webhook %s", what)
	return all[slices.IndexFunc(all, ok)]
}

var statusRank = map[string]int{"Sent": 1, "Delivered": 2, "Read": 3}

// Link, send and receive with webhooks on: session.status on link,
// message.status forward only ending at Read, message.upsert of an incoming
// text; every delivery is signed.
func TestWebhooksOfLinkSendAndReceive(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := linkedBridge(t, sim, t.TempDir(), hooks.env()...)
	hooks.wait("session.status connected", func(e hookEvent) bool {
		return e.str("event") == "session.status" && e.str("state") == "connected"
	})

	contact := sim.Contact(alice, "Alice")
	contact.SetReceiptMode(wasim.ReceiptsRead)
	code, raw := sendText(t, p, alice, "hi")
	if code != http.StatusOK {
		t.Fatalf("send: %d %s", code, raw)
	}
	wid := decode[sendResponse](t, raw).Messages[0].WhatsAppID
	hooks.wait("message.status Read", func(e hookEvent) bool { return e.str("whatsapp_id") == wid && e.str("status") == "Read" })
	// Every status it passed, in order, naming the recipient as the log does.
	var passed []string
	for _, e := range hooks.all() {
		if e.str("event") != "message.status" || e.str("whatsapp_id") != wid {
			continue
		}
		passed = append(passed, e.str("status"))
		if e.str("recipient") != alice+"@s.whatsapp.net" {
			t.Errorf("status event %+v: the recipient is not the log's", e.Payload)
		}
	}
	if !slices.Equal(passed, []string{"Sent", "Delivered", "Read"}) {
		t.Errorf("message.status events %v, want Sent, Delivered, Read", passed)
	}

	id, err := contact.SendText(context.Background(), types.NewJID(testAccount, types.DefaultUserServer), "hello bridge")
	if err != nil {
		t.Fatal(err)
	}
	up := hooks.wait("message.upsert", func(e hookEvent) bool { return e.str("event") == "message.upsert" })
	if up.str("whatsapp_id") != id || up.str("text") != "hello bridge" || up.str("from") != alice || up.str("chat") != alice || up.str("type") != "text" {
		t.Errorf("upsert %+v", up.Payload)
	}

	// The dead-letter endpoints are wired, behind the admin token.
	base := "http://" + p.addr + "/api/admin/webhooks"
	if code, body := request(t, http.MethodGet, base+"/failed", testAdminToken, "", "", nil); code != http.StatusOK || body != "[]\n" {
		t.Errorf("failed: %d %q", code, body)
	}
	if code, _ := request(t, http.MethodGet, base+"/failed", "", "", "", nil); code != http.StatusUnauthorized {
		t.Errorf("failed without a token: %d", code)
	}
	if code, _ := request(t, http.MethodPost, base+"/1/redeliver", testAdminToken, "", "", nil); code != http.StatusConflict {
		t.Errorf("redeliver of a delivered event: %d", code)
	}
	if code, _ := request(t, http.MethodPost, base+"/99999/redeliver", testAdminToken, "", "", nil); code != http.StatusNotFound {
		t.Errorf("redeliver of an unknown event: %d", code)
	}
	if _, body := request(t, http.MethodGet, "http://"+p.addr+"/api/admin/audit", testAdminToken, "", "", nil); strings.Count(body, `"action":"webhooks.redeliver"`) != 2 {
		t.Errorf("redeliveries not audited: %s", body)
	}
}

// kill -9 in the middle of a backlog (the receiver failing): after the
// restart every stored event is delivered, duplicates only with the same
// webhook-id and body.
func TestWebhookBacklogSurvivesKill9(t *testing.T) {
	sim := wasim.Start(t)
	dataDir := t.TempDir()
	hooks := newHookReceiver(t)
	hooks.failing.Store(true)
	p := linkedBridge(t, sim, dataDir, hooks.env()...)
	sim.Contact(alice, "Alice").SetReceiptMode(wasim.ReceiptsRead)
	for range 20 {
		if code, raw := sendText(t, p, alice, "backlog"); code != http.StatusOK {
			t.Fatalf("send: %d %s", code, raw)
		}
	}
	time.Sleep(500 * time.Millisecond) // receipts come in
	p.kill()

	stored := storedWebhookIDs(t, dataDir)
	if len(stored) < 21 { // session.status and at least Sent or Delivered per message
		t.Fatalf("only %d events stored before the crash", len(stored))
	}
	hooks.failing.Store(false)
	startBridge(t, simBridgeBin, append(simEnv(sim, dataDir), hooks.env()...))
	testutil.Poll(t, 60*time.Second, func() (int, bool) {
		got := map[string]bool{}
		for _, e := range hooks.all() {
			got[e.ID] = true
		}
		missing := 0
		for id := range stored {
			if !got[id] {
				missing++
			}
		}
		return missing, missing == 0
	}, "events stored before the crash (of %d) that never arrived", len(stored))
	t.Logf("%d events stored before the crash, all delivered after the restart", len(stored))
	bodies := map[string]string{}
	rank := map[string]int{} // per message, the last status delivered
	for _, e := range hooks.all() {
		b, _ := json.Marshal(e.Payload)
		if prev, seen := bodies[e.ID]; seen {
			if prev != string(b) {
				t.Errorf("webhook-id %s delivered with two bodies", e.ID)
			}
			continue
		}
		bodies[e.ID] = string(b)
		if e.str("event") == "message.status" {
			wid, r := e.str("whatsapp_id"), statusRank[e.str("status")]
			if r <= rank[wid] {
				t.Errorf("%s: %s arrived after a later status", wid, e.str("status"))
			}
			rank[wid] = r
		}
	}
}

// storedWebhookIDs reads the outbox of a stopped bridge.
func storedWebhookIDs(t *testing.T, dataDir string) map[string]bool {
	t.Helper()
	db := testutil.OpenBridgeDBAt(t, filepath.Join(dataDir, "bridge.db"))
	defer db.Close() // before the next bridge process opens it
	rows, err := db.Query(`SELECT webhook_id FROM webhook_outbox`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	return ids
}
