package process

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// apiJSON sends a JSON body (or none) with the API key.
func apiJSON(t testing.TB, p *bridgeProcess, method, path, body string, out any) (int, string) {
	t.Helper()
	ct := ""
	if body != "" {
		ct = "application/json"
	}
	return request(t, method, "http://"+p.addr+path+sep(path)+"apiKey="+testAPIKey, "", ct, body, out)
}

func sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}

// Reactions, edits and revokes through the API reach the contact naming
// the right message; read marks and typing reach the simulator; the
// contact endpoint answers from WhatsApp.
func TestActionsThroughTheAPI(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir())
	contact := sim.Contact(alice, "Alice")
	code, raw := sendText(t, p, alice, "hello")
	if code != http.StatusOK {
		t.Fatalf("send: %d %s", code, raw)
	}
	sent := decode[sendResponse](t, raw).Messages[0]
	receive(t, contact, sent.WhatsAppID)

	// An action answers as a send does: sent on its immediate attempt.
	action := func(method, path, body string) *wasim.Message {
		t.Helper()
		var res sendResponse
		if code, raw := apiJSON(t, p, method, path, body, &res); code != http.StatusOK || len(res.Messages) != 1 ||
			!slices.Contains([]string{"Sent", "Delivered", "Read"}, res.Messages[0].Status) {
			t.Fatalf("%s %s: %d %s", method, path, code, raw)
		}
		return receive(t, contact, res.Messages[0].WhatsAppID)
	}
	if target, emoji, _, ok := action("POST", "/api/messages/"+sent.ID+"/reaction", `{"emoji":"👍"}`).Reaction(); !ok ||
		target != sent.WhatsAppID || emoji != "👍" {
		t.Errorf("reaction to %s: %s %q", sent.WhatsAppID, target, emoji)
	}
	if target, text, ok := action("PATCH", "/api/messages/"+sent.WhatsAppID, `{"text":"hello again"}`).Edit(); !ok ||
		target != sent.WhatsAppID || text != "hello again" {
		t.Errorf("edit of %s: %s %q", sent.WhatsAppID, target, text)
	}
	if target, ok := action("DELETE", "/api/messages/"+sent.ID, "").Revoke(); !ok || target != sent.WhatsAppID {
		t.Errorf("revoke of %s: %s", sent.WhatsAppID, target)
	}

	// An id neither in the log nor in the incoming history, without ?chat=,
	// names nothing the bridge could act on.
	for _, a := range [][3]string{{"POST", "/reaction", `{"emoji":"👍"}`}, {"PATCH", "", `{"text":"x"}`}, {"DELETE", "", ""}} {
		if code, raw := apiJSON(t, p, a[0], "/api/messages/3EB0DEADBEEF"+a[1], a[2], nil); code != http.StatusNotFound ||
			!strings.Contains(raw, `"message_not_found"`) {
			t.Errorf("%s on an unknown id: %d %s", a[0], code, raw)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	asked, err := contact.SendText(ctx, types.NewJID(testAccount, types.DefaultUserServer), "a question")
	if err != nil {
		t.Fatal(err)
	}
	if target, _, fromMe, ok := action("POST", "/api/messages/"+asked+"/reaction?chat="+alice, `{"emoji":"❤️"}`).Reaction(); !ok ||
		target != asked || fromMe {
		t.Errorf("reaction to a received message: %s fromMe=%v", target, fromMe)
	}
	// Once the incoming history holds it, a received message needs no ?chat=.
	testutil.Eventually(t, 10*time.Second, func() bool {
		_, raw := apiJSON(t, p, "GET", "/api/messages?direction=in", "", nil)
		return strings.Contains(raw, asked)
	}, "the question never reached the incoming history")
	if target, emoji, fromMe, ok := action("POST", "/api/messages/"+asked+"/reaction", `{"emoji":"🙏"}`).Reaction(); !ok ||
		target != asked || emoji != "🙏" || fromMe {
		t.Errorf("reaction by id alone to a received message: %s %q fromMe=%v", target, emoji, fromMe)
	}
	if code, raw := apiJSON(t, p, "POST", "/api/chats/"+alice+"/read", `{"message_id":"`+asked+`"}`, nil); code != http.StatusNoContent {
		t.Fatalf("read: %d %s", code, raw)
	}
	if _, err := contact.WaitTick(ctx, asked, types.ReceiptTypeRead); err != nil {
		t.Errorf("no read receipt: %v", err)
	}
	if code, raw := apiJSON(t, p, "POST", "/api/chats/"+alice+"/presence", `{"state":"composing"}`, nil); code != http.StatusNoContent {
		t.Fatalf("presence: %d %s", code, raw)
	}
	if _, err := sim.WaitChatState(ctx, func(cs wasim.ChatState) bool { return cs.Chat.User == alice && cs.State == "composing" }); err != nil {
		t.Errorf("no chat state: %v", err)
	}
	var c struct {
		OnWhatsApp bool    `json:"on_whatsapp"`
		JID        *string `json:"jid"`
	}
	if code, raw := apiJSON(t, p, "GET", "/api/contacts/"+alice, "", &c); code != http.StatusOK || !c.OnWhatsApp || c.JID == nil {
		t.Errorf("contact: %d %s", code, raw)
	}
}

// A burst of 50 messages to a number not on WhatsApp: each fails at once
// with not_on_whatsapp and no retry, and WhatsApp is asked once. A message
// whose fate is known before the answer is answered 422 with its reason;
// one that waited behind an earlier message of the chat is answered 202.
func TestNotOnWhatsAppBurst(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir())
	const stranger = "4915199999999"
	code, raw := sendText(t, p, stranger, "hello?")
	if res := decode[sendResponse](t, raw); code != http.StatusUnprocessableEntity || res.Error == nil ||
		res.Error.Code != "not_on_whatsapp" || res.Messages[0].Status != "Failed" || res.Messages[0].Reason != "not_on_whatsapp" {
		t.Fatalf("send to a number not on WhatsApp: %d %s", code, raw)
	}
	ids := make([]string, 50)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			code, raw := sendText(t, p, stranger, "anyone there?")
			m := decode[sendResponse](t, raw).Messages[0]
			failedAtOnce := code == http.StatusUnprocessableEntity && m.Reason == "not_on_whatsapp"
			queued := code == http.StatusAccepted && m.Status == "Queued" && m.QueuePosition > 0
			if !failedAtOnce && !queued {
				t.Errorf("send %d: %d %s", i, code, raw)
				return
			}
			ids[i] = m.ID
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id == "" {
			continue
		}
		e := waitMessage(t, p, id, "Failed", func(e logEntry) bool { return e.Status != "Queued" })
		if e.Status != "Failed" || e.LastError != "not_on_whatsapp" || e.RetryCount != 0 || e.Attempts != 1 {
			t.Errorf("message %+v", e)
		}
	}
	if n := sim.ContactQuestions(stranger); n != 1 {
		t.Errorf("WhatsApp was asked %d times about %s, want once", n, stranger)
	}
	var c struct {
		OnWhatsApp bool `json:"on_whatsapp"`
	}
	if code, raw := apiJSON(t, p, "GET", "/api/contacts/%2B"+stranger, "", &c); code != http.StatusOK || c.OnWhatsApp {
		t.Errorf("contact: %d %s", code, raw)
	}
	if n := sim.ContactQuestions(stranger); n != 1 {
		t.Errorf("the contact endpoint asked again: %d", n)
	}
}

// A message waiting for its retry when the account logs out becomes Failed
// with reason logged_out, and the account linked next never sends it.
func TestLogoutFailsPendingMessages(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir(), "RETRY_SCHEDULE=1m")
	contact := sim.Contact(alice, "Alice")
	if code, raw := sendText(t, p, alice, "warm up"); code != http.StatusOK { // device lists cached: the fault hits the send
		t.Fatalf("warm up: %d %s", code, raw)
	}
	sim.Phone(testAccount).FailSends(1, wasim.FailAck, 500)
	code, raw := sendText(t, p, alice, "pending")
	if code != http.StatusAccepted {
		t.Fatalf("send: %d %s", code, raw)
	}
	pending := decode[sendResponse](t, raw).Messages[0]

	if code, raw := request(t, http.MethodPost, "http://"+p.addr+"/session/logout", testAdminToken, "", "", nil); code != http.StatusOK {
		t.Fatalf("logout: %d %s", code, raw)
	}
	e := waitMessage(t, p, pending.ID, "Failed", func(e logEntry) bool { return e.Status != "Queued" })
	if e.Status != "Failed" || e.LastError != "logged_out" {
		t.Fatalf("after logout: %+v", e)
	}

	wasimtest.LinkBridge(t, sim.Phone("4915100000005"), "http://"+p.addr, testAdminToken)
	waitAdminState(t, p, "connected as the next account", func(s adminState) bool { return connected(s) && s.Account == "4915100000005" })
	if code, raw := sendText(t, p, alice, "from the next account"); code != http.StatusOK {
		t.Fatalf("send from the next account: %d %s", code, raw)
	}
	for _, m := range contact.Received() {
		if m.ID == pending.WhatsAppID {
			t.Fatal("the next account sent the logged-out account's message")
		}
	}
	if e := getMessage(t, p, pending.ID); e.Status != "Failed" {
		t.Errorf("later: %+v", e)
	}
}
