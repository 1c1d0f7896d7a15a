package cloudapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

const testAccount = "4915100000001"

var testSecret = []byte("app-secret")

// decodeHook encodes ev and returns the body's one value, after checking
// the signature and that the body is ASCII as Meta's are.
func decodeHook(t *testing.T, ev webhook.Event) value {
	t.Helper()
	body, h, err := Encode(testAccount, ev, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	if h.Get(SignatureHeader) != Sign(body, testSecret) || !strings.HasPrefix(h.Get(SignatureHeader), "sha256=") {
		t.Errorf("signature %q", h.Get(SignatureHeader))
	}
	for _, c := range body {
		if c >= 0x80 {
			t.Fatalf("non-ASCII byte in %s", body)
		}
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil || env.Object != "whatsapp_business_account" ||
		len(env.Entry) != 1 || env.Entry[0].ID != WABAID(testAccount) || env.Entry[0].Changes[0].Field != "messages" {
		t.Fatalf("envelope %s: %v", body, err)
	}
	v := env.Entry[0].Changes[0].Value
	if v.Metadata.PhoneNumberID != testAccount || v.MessagingProduct != "whatsapp" {
		t.Errorf("metadata %+v", v)
	}
	return v
}

func TestEncodeStatuses(t *testing.T) {
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	alice := bridge.PhoneRecipient("4915100000002")
	failed := webhook.MessageStatusOf(bridge.Message{WhatsAppID: "3EB0AA", Recipient: alice, Status: bridge.StatusFailed,
		LastError: bridge.FailNotOnWhatsApp, UpdatedAt: at})
	st := decodeHook(t, failed).Statuses
	if len(st) != 1 || st[0].ID != "3EB0AA" || st[0].Status != "failed" || st[0].RecipientID != "4915100000002" ||
		st[0].Timestamp != "1795600800" || len(st[0].Errors) != 1 || st[0].Errors[0].Code != CodeNotOnWhatsApp {
		t.Errorf("failed status %+v", st)
	}
	read := decodeHook(t, webhook.MessageStatus("3EB0AA", alice, bridge.StatusRead, at)).Statuses
	if read[0].Status != "read" || read[0].Errors != nil {
		t.Errorf("read status %+v", read)
	}
	for _, ev := range []webhook.Event{
		webhook.MessageStatus("3EB0AA", alice, bridge.StatusQueued, at),
		webhook.SessionStatus(bridge.SessionStatus{State: "connected"}, at),
		webhook.MessageUpsert(bridge.Incoming{Type: bridge.IncomingRevoke, WhatsAppID: "X", From: alice, Chat: alice}),
	} {
		if _, _, err := Encode(testAccount, ev, testSecret); !errors.Is(err, ErrNoCloudShape) {
			t.Errorf("%s: %v, want ErrNoCloudShape", ev.Type, err)
		}
	}
}

func TestEncodeMessages(t *testing.T) {
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	lid := bridge.Recipient{Kind: bridge.RecipientLID, ID: "123456789"}
	group := bridge.Recipient{Kind: bridge.RecipientGroup, ID: "120363025246125486"}
	// A hidden number writes a photo into a group, quoting a message.
	photo := bridge.Incoming{WhatsAppID: "3A01", From: lid, FromLID: lid, Chat: group, PushName: "Zoë", Type: "image",
		Text: "look 😀", Timestamp: at, Quoted: "3EB0AA",
		Media: &bridge.Media{ID: "med_0123456789abcdef0123456789abcdef", MimeType: "image/jpeg", SHA256: "ab"}}
	v := decodeHook(t, webhook.MessageUpsert(photo))
	c, m := v.Contacts[0], v.Messages[0]
	if uid := defaultUserIDs.For(lid); c.WaID != "" || c.UserID != uid || c.Profile.Name != "Zoë" || m.From != "123456789@lid" ||
		m.FromUserID != uid || m.GroupID != "120363025246125486@g.us" {
		t.Errorf("hidden sender: %+v %+v", c, m)
	}
	if m.Type != "image" || m.Image == nil || m.Image.ID != photo.Media.ID || m.Image.Caption != "look 😀" ||
		m.Context == nil || m.Context.ID != "3EB0AA" || m.Timestamp != "1795600800" {
		t.Errorf("photo %+v %+v", m, m.Image)
	}
	alice := bridge.PhoneRecipient("4915100000002")
	for _, c := range []struct {
		in   bridge.Incoming
		want func(hookMessage) bool
	}{
		{bridge.Incoming{Type: "text", Text: "hi"}, func(m hookMessage) bool { return m.Type == "text" && m.Text.Body == "hi" }},
		{bridge.Incoming{Type: "location", Location: &bridge.Location{Latitude: 1.5, Longitude: 2.5, Name: "Here"}},
			func(m hookMessage) bool {
				return m.Type == "location" && m.Location.Latitude == 1.5 && m.Location.Name == "Here"
			}},
		{bridge.Incoming{Type: "contact", Contacts: []bridge.ContactCard{{DisplayName: "Bob", VCard: "BEGIN:VCARD"}}},
			func(m hookMessage) bool { return m.Type == "contacts" && m.Contacts[0].Name.FormattedName == "Bob" }},
		{bridge.Incoming{Type: bridge.IncomingReaction, TargetID: "3EB0AA", Emoji: "👍"},
			func(m hookMessage) bool {
				return m.Type == "reaction" && m.Reaction.MessageID == "3EB0AA" && m.Reaction.Emoji == "👍"
			}},
		{bridge.Incoming{Type: "audio", Media: &bridge.Media{ID: "med_1", MimeType: "audio/ogg", PTT: true}},
			func(m hookMessage) bool { return m.Type == "audio" && m.Audio.Voice }},
		{bridge.Incoming{Type: "document", Media: &bridge.Media{ID: "med_2", FileName: "a.pdf"}},
			func(m hookMessage) bool { return m.Type == "document" && m.Document.Filename == "a.pdf" }},
		{bridge.Incoming{Type: bridge.IncomingButtonReply, ReplyID: "order-17:no", Text: "Tomorrow", Quoted: "3EB0BB"},
			func(m hookMessage) bool {
				return m.Type == "interactive" && m.Interactive.Type == "button_reply" && m.Interactive.ButtonReply.ID == "order-17:no" &&
					m.Interactive.ButtonReply.Title == "Tomorrow" && m.Context.ID == "3EB0BB" && m.Text == nil
			}},
		{bridge.Incoming{Type: bridge.IncomingListReply, ReplyID: "row-2", Text: "Express"},
			func(m hookMessage) bool {
				return m.Type == "interactive" && m.Interactive.ListReply.ID == "row-2" && m.Interactive.ButtonReply == nil
			}},
	} {
		c.in.WhatsAppID, c.in.From, c.in.FromPhone, c.in.Chat = "3A02", alice, alice, alice
		v := decodeHook(t, webhook.MessageUpsert(c.in))
		if v.Contacts[0].WaID != "4915100000002" || v.Messages[0].From != "4915100000002" || !c.want(v.Messages[0]) {
			t.Errorf("%s: %+v", c.in.Type, v.Messages[0])
		}
	}
}

// The receiver's verification handshake, as Meta performs it.
func TestHandshake(t *testing.T) {
	receiver := func(token string, echo bool) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if q.Get("hub.mode") != "subscribe" || q.Get("hub.verify_token") != token {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			if echo {
				_, _ = w.Write([]byte(q.Get("hub.challenge")))
			}
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	ctx := context.Background()
	if err := Handshake(ctx, http.DefaultClient, receiver("tok", true).URL+"/hook?x=1", "tok"); err != nil {
		t.Errorf("a receiver that echoes: %v", err)
	}
	if err := Handshake(ctx, http.DefaultClient, receiver("other", true).URL, "tok"); err == nil {
		t.Error("a receiver that refuses the token passed")
	}
	if err := Handshake(ctx, http.DefaultClient, receiver("tok", false).URL, "tok"); err == nil {
		t.Error("a receiver that does not echo the challenge passed")
	}
	if err := Handshake(ctx, http.DefaultClient, "ftp://x", "tok"); err == nil {
		t.Error("a non-HTTP target passed")
	}
}

// A receiver that redirects the handshake elsewhere fails it: the client
// never follows, so the verify token never reaches the other host (in its
// URL or in a Referer), whatever the client given would do.
func TestHandshakeFollowsNoRedirect(t *testing.T) {
	var reached atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		_, _ = w.Write([]byte(r.URL.Query().Get("hub.challenge")))
	}))
	t.Cleanup(elsewhere.Close)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/?"+r.URL.RawQuery, http.StatusFound)
	}))
	t.Cleanup(redirecting.Close)
	if err := Handshake(context.Background(), http.DefaultClient, redirecting.URL, "tok"); err == nil {
		t.Error("a redirected handshake passed")
	}
	if reached.Load() != 0 {
		t.Errorf("the redirect was followed: the other host got the verify token %d times", reached.Load())
	}
}

func TestWABAIDIsStable(t *testing.T) {
	a, b := WABAID(testAccount), WABAID("4915100000009")
	if a != WABAID(testAccount) || a == b || len(a) != 16 || a[0] != '1' {
		t.Errorf("WABA ids %s %s", a, b)
	}
}
