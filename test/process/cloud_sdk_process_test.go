package process

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/cloudapi"
	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// Two published Cloud API client libraries, whatsapp-api-js and
// @kapso/whatsapp-cloud-api (pinned in hack/cloudsdk's package-lock.json),
// used unchanged but for their base URL, send every type they build to a
// simulated contact through the Cloud door (reply buttons from each one's
// builder, which the contact's phone shows as buttons; a list and a
// call-to-action link refused with Cloud's 131051), mark a message read,
// upload, fetch and delete media, manage templates and send one with named
// parameters; then each parses the
// bridge's real webhooks in Cloud's format with its own webhook code,
// signature included, a tap on a reply button among them. Every message
// they sent reaches the contact.
func TestCloudSDKs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: installs and runs two Node libraries")
	}
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := linkedBridge(t, sim, t.TempDir(), hooks.env()...)
	contact := sim.Contact(alice, "Alice")
	contact.SetReceiptMode(wasim.ReceiptsRead)
	readID := writeTo(t, contact, "read me")
	text := hooks.wait("message.upsert "+readID, func(e hookEvent) bool { return e.str("whatsapp_id") == readID })
	photo := sendMediaAndWait(t, sim, hooks, wasim.Attachment{Kind: "image", Data: cloudPNG, MimeType: "image/png", Caption: "pic"})
	sentID := cloudSend(t, p, map[string]any{"to": alice, "type": "text", "text": map[string]any{"body": "status me"}})
	read := hooks.wait("Read of "+sentID, func(e hookEvent) bool { return e.str("whatsapp_id") == sentID && e.str("status") == "Read" })
	tap := tapAButton(t, p, hooks, contact)
	hookFile, pngFile := writeCloudHooks(t, text, photo, read, tap)

	dir := cloudSDKDir(t)
	env := append(os.Environ(), "BRIDGE_URL=http://"+p.addr, "TOKEN="+testAPIKey, "PHONE_ID="+testAccount, "TO="+alice,
		"WABA="+cloudapi.WABAID(testAccount), "APP_SECRET="+string(cloudHookSecret), "READ_ID="+readID,
		"HOOKS_FILE="+hookFile, "PNG_FILE="+pngFile)
	var out struct {
		Sent    map[string]string `json:"sent"`
		Refused map[string]int    `json:"refused"`
		Hooks   map[string][]struct {
			Kind, ID, Type, Status, Reply string
		} `json:"hooks"`
	}
	raw := runIn(t, dir, env, "node", "main.mjs")
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("the libraries printed %q: %v", raw, err)
	}
	if len(out.Sent) != 18 { // nine types through each library
		t.Errorf("sent only %v", out.Sent)
	}
	for name, id := range out.Sent {
		if m := receive(t, contact, id); m.Content() == nil {
			t.Errorf("%s (%s) arrived empty", name, id)
		}
	}
	for name, want := range map[string]string{"wajs interactive": "[{y Yes} {n No}] *Party*\n\nComing?\n\n_RSVP_",
		"kapso buttons": "[{a Apple} {b Pear}] *Fruit*\n\nPick one\n\n_fresh_"} {
		m := receive(t, contact, out.Sent[name])
		if got := fmt.Sprint(m.Buttons()) + " " + m.Content().GetInteractiveMessage().GetBody().GetText(); got != want {
			t.Errorf("%s: the contact's phone shows %q", name, got)
		}
	}
	for name, want := range map[string]string{"wajs template": "Order 7 for Wajs", "kapso named template": "Order 9 for Kap"} {
		if got := receive(t, contact, out.Sent[name]).Text(); got != want {
			t.Errorf("%s: the contact's phone shows %q, want %q", name, got, want)
		}
	}
	if len(out.Refused) != 2 || out.Refused["wajs cta_url"] != cloudapi.CodeUnsupportedType || out.Refused["kapso list"] != cloudapi.CodeUnsupportedType {
		t.Errorf("refused %v, want 131051 for each", out.Refused)
	}
	for lib, seen := range out.Hooks {
		want := map[string]bool{"message " + readID: false, "message " + photo.str("whatsapp_id"): false, "status " + sentID: false,
			"message " + tap.str("whatsapp_id") + " interactive order-17:no": false}
		for _, s := range seen {
			want[s.Kind+" "+s.ID] = true
			if s.Type == "interactive" {
				want[s.Kind+" "+s.ID+" "+s.Type+" "+s.Reply] = true
			}
		}
		for k, ok := range want {
			if !ok {
				t.Errorf("%s did not parse the webhook of %s: %+v", lib, k, seen)
			}
		}
	}
	if code, body := apiJSON(t, p, http.MethodGet, "/api/messages/"+out.Sent["kapso text"], "", nil); code != http.StatusOK {
		t.Errorf("the JSON door does not find kapso's text: %d %s", code, body)
	}
}

// tapAButton sends reply buttons through the Cloud door; the contact taps
// one, and the tap's message.upsert is returned.
func tapAButton(t *testing.T, p *bridgeProcess, hooks *hookReceiver, contact *wasim.User) hookEvent {
	t.Helper()
	id := cloudSend(t, p, map[string]any{"to": alice, "type": "interactive", "interactive": map[string]any{"type": "button",
		"body": map[string]any{"text": "Deliver today?"}, "action": map[string]any{"buttons": []map[string]any{
			{"type": "reply", "reply": map[string]any{"id": "order-17:yes", "title": "Yes"}},
			{"type": "reply", "reply": map[string]any{"id": "order-17:no", "title": "Tomorrow"}}}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tap, err := contact.Tap(ctx, receive(t, contact, id), "order-17:no")
	if err != nil {
		t.Fatal(err)
	}
	return hooks.wait("the tap "+tap, func(e hookEvent) bool { return e.str("whatsapp_id") == tap })
}

// writeCloudHooks encodes delivered events in Cloud's format into a file
// of {body, signature}, and the test picture into another.
func writeCloudHooks(t *testing.T, events ...hookEvent) (hooksFile, pngFile string) {
	t.Helper()
	type signed struct {
		Body      string `json:"body"`
		Signature string `json:"signature"`
	}
	var all []signed
	for _, e := range events {
		body := encodeCloud(t, e)
		all = append(all, signed{Body: string(body), Signature: cloudapi.Sign(body, cloudHookSecret)})
	}
	dir := t.TempDir()
	hooksFile, pngFile = filepath.Join(dir, "hooks.json"), filepath.Join(dir, "photo.png")
	data, _ := json.Marshal(all)
	if err := os.WriteFile(hooksFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pngFile, cloudPNG, 0o600); err != nil {
		t.Fatal(err)
	}
	return hooksFile, pngFile
}
