package process

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// statusPhoto is an image as the bridge sniffs one: only its bytes matter.
var statusPhoto = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("a status photo "), 100)...)

// postStatus posts a status through POST /api/messages and returns its
// WhatsApp id.
func postStatus(t *testing.T, p *bridgeProcess, body string) string {
	t.Helper()
	code, raw := apiJSON(t, p, "POST", "/api/messages", body, nil)
	if code != http.StatusOK {
		t.Fatalf("post a status: %d %s", code, raw)
	}
	return decode[sendResponse](t, raw).Messages[0].WhatsAppID
}

// A status posted through the API reaches the recipients it names and no
// one else, from status@broadcast, as a text with its colour or as an
// uploaded image with its caption; the recipient's receipt comes back as
// message.status.
func TestStatusPostThroughTheAPI(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := linkedBridge(t, sim, t.TempDir(), hooks.env()...)
	ann, bob := sim.Contact(alice, "Alice"), sim.Contact("4915100000003", "Bob")

	text := postStatus(t, p, `{"to":"status@broadcast","type":"text","text":"Open on Sunday",
		"status":{"recipients":["`+alice+`"],"background_color":"#1E88E5","font":"system_bold"}}`)
	m := receive(t, ann, text)
	if m.Chat != types.StatusBroadcastJID || m.Text() != "Open on Sunday" ||
		m.Content().GetExtendedTextMessage().GetBackgroundArgb() != 0xFF1E88E5 {
		t.Errorf("Alice's phone shows %v from %s", m.Content(), m.Chat)
	}
	hooks.wait("message.status Delivered of the status", func(e hookEvent) bool {
		return e.str("event") == "message.status" && e.str("whatsapp_id") == text && e.str("status") == "Delivered"
	})

	ct, body := multipartBody(t, part{name: "file", fileName: "menu.png", data: statusPhoto})
	var up struct {
		UploadID string `json:"upload_id"`
	}
	if code, raw := request(t, "POST", "http://"+p.addr+"/api/uploads?apiKey="+testAPIKey, "", ct, string(body), &up); code != http.StatusCreated {
		t.Fatalf("upload: %d %s", code, raw)
	}
	image := postStatus(t, p, `{"to":"status@broadcast","type":"image","text":"the menu","media":{"upload_id":"`+up.UploadID+`"},
		"status":{"recipients":["`+alice+`"]}}`)
	if got := receive(t, ann, image); got.Chat != types.StatusBroadcastJID || got.Media == nil ||
		!bytes.Equal(got.Media.Data, statusPhoto) || got.Media.Caption != "the menu" {
		t.Errorf("image status: %+v", got.Media)
	}
	for _, id := range []string{text, image} {
		if slices.ContainsFunc(bob.Received(), func(b *wasim.Message) bool { return b.ID == id }) {
			t.Errorf("Bob, who is no recipient, got %s", id)
		}
	}
}

// With STATUS_UPDATES=on a contact's status arrives as status.update (an
// image with its media, fetchable as any incoming media), never as a
// message.upsert of the contact's chat.
func TestStatusUpdatesThroughTheBridge(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := linkedBridge(t, sim, t.TempDir(), append(hooks.env(), "STATUS_UPDATES=on")...)
	ann, me := sim.Contact(alice, "Alice"), sim.Phone(testAccount)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	text, err := ann.PostStatus(ctx, &waE2E.Message{Conversation: proto.String("Back on Monday")}, me)
	if err != nil {
		t.Fatal(err)
	}
	ev := hooks.wait("status.update "+text, func(e hookEvent) bool { return e.str("whatsapp_id") == text })
	if ev.str("event") != "status.update" || ev.str("from") != alice || ev.str("type") != "text" || ev.str("text") != "Back on Monday" ||
		ev.str("push_name") != "Alice" {
		t.Errorf("status.update %+v", ev.Payload)
	}
	photo, err := ann.PostMediaStatus(ctx, wasim.Attachment{Kind: "image", Data: statusPhoto, MimeType: "image/png", Caption: "view"}, me)
	if err != nil {
		t.Fatal(err)
	}
	ev = hooks.wait("status.update "+photo, func(e hookEvent) bool { return e.str("whatsapp_id") == photo })
	id, url, sum := mediaOf(t, ev)
	if ev.str("type") != "image" || ev.str("text") != "view" || sum != sha256Hex(statusPhoto) {
		t.Errorf("image status.update %+v", ev.Payload)
	}
	if resp, got := getMedia(t, p, url); resp.StatusCode != http.StatusOK || !bytes.Equal(got, statusPhoto) {
		t.Errorf("GET %s (%s): %d, %d bytes", url, id, resp.StatusCode, len(got))
	}
	for _, e := range hooks.all() {
		if e.str("event") == "message.upsert" {
			t.Errorf("a status arrived as a message: %+v", e.Payload)
		}
	}
}
