package process

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/cloudapi"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/internal/apitest"
)

// cloudVersion is a Graph version as clients name it; any v<major>.<minor>
// is taken.
const cloudVersion = "v21.0"

// Samples the bridge sniffs as what they are.
var (
	cloudPNG  = []byte("\x89PNG\r\n\x1a\n a cloud picture")
	cloudMP4  = append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), bytes.Repeat([]byte("frame"), 50)...)
	cloudOpus = append([]byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x13OpusHead"),
		bytes.Repeat([]byte{1}, 40)...)
	cloudPDF = []byte("%PDF-1.4 a cloud document")
)

// cloudCall is one Graph request to the bridge's Cloud door with the API
// key as bearer token, checked against the API description.
func cloudCall(t *testing.T, p *bridgeProcess, method, path, contentType string, body []byte, token string, headers ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+p.addr+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ": ")
		req.Header.Set(name, value)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := apitest.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// cloudJSON posts v as JSON and decodes the 200 answer into out.
func cloudJSON(t *testing.T, p *bridgeProcess, method, path string, v any, out any) {
	t.Helper()
	var body []byte
	ct := ""
	if v != nil {
		body, _ = json.Marshal(v)
		ct = "application/json"
	}
	code, raw := cloudCall(t, p, method, path, ct, body, testAPIKey)
	if code != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, code, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, raw, err)
		}
	}
}

// graphError is the error of a Graph answer.
type graphError struct {
	Error struct {
		Code          int    `json:"code"`
		Subcode       int    `json:"error_subcode"`
		BridgeCode    string `json:"msgbridge_code"`
		FBTraceID     string `json:"fbtrace_id"`
		MessageForAll string `json:"message"`
	} `json:"error"`
}

// cloudUpload uploads data as Graph's media endpoint takes it.
func cloudUpload(t *testing.T, p *bridgeProcess, name, mimeType string, data []byte) string {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("messaging_product", "whatsapp")
	_ = mw.WriteField("type", mimeType)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	h.Set("Content-Type", mimeType)
	w, _ := mw.CreatePart(h)
	_, _ = w.Write(data)
	_ = mw.Close()
	code, raw := cloudCall(t, p, http.MethodPost, "/"+cloudVersion+"/"+testAccount+"/media", mw.FormDataContentType(), buf.Bytes(), testAPIKey)
	var up struct{ ID string }
	if code != http.StatusOK || json.Unmarshal(raw, &up) != nil || up.ID == "" {
		t.Fatalf("upload %s: %d %s", name, code, raw)
	}
	return up.ID
}

// cloudSent is Graph's answer to a send.
type cloudSent struct {
	MessagingProduct string `json:"messaging_product"`
	Contacts         []struct {
		Input string `json:"input"`
		WaID  string `json:"wa_id"`
	} `json:"contacts"`
	Messages []struct {
		ID string `json:"id"`
	} `json:"messages"`
}

// cloudSend sends a Cloud message to to and returns its id.
func cloudSend(t *testing.T, p *bridgeProcess, msg map[string]any) string {
	t.Helper()
	msg["messaging_product"] = "whatsapp"
	var out cloudSent
	cloudJSON(t, p, http.MethodPost, "/"+cloudVersion+"/"+testAccount+"/messages", msg, &out)
	if len(out.Messages) != 1 || out.Messages[0].ID == "" || out.MessagingProduct != "whatsapp" || len(out.Contacts) != 1 {
		t.Fatalf("send answer %+v", out)
	}
	return out.Messages[0].ID
}

// mediaHost serves files for link sends, and one redirect to another host.
func mediaHost(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/files/report.pdf":
			_, _ = w.Write(cloudPDF)
		case "/files/photo.png":
			_, _ = w.Write(cloudPNG)
		case "/elsewhere":
			http.Redirect(w, r, "http://localhost:1/files/photo.png", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Every type sent through the Cloud door reaches the contact as what it
// is, on the bridge's own queue: the answer's id is the message's
// whatsapp_id, which the bridge's own API finds.
func TestCloudDoorSendsEveryType(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	files := mediaHost(t)
	p := linkedBridge(t, sim, t.TempDir(), append(hooks.env(), "CLOUD_MEDIA_HOSTS="+strings.TrimPrefix(files.URL, "http://"))...)
	contact := sim.Contact(alice, "Alice")
	image := cloudUpload(t, p, "photo.png", "image/png", cloudPNG)
	video := cloudUpload(t, p, "clip.mp4", "video/mp4", cloudMP4)
	audio := cloudUpload(t, p, "note.ogg", "audio/ogg", cloudOpus)
	waba := cloudapi.WABAID(testAccount)
	cloudJSON(t, p, http.MethodPost, "/"+cloudVersion+"/"+waba+"/message_templates", map[string]any{
		"name": "order_ready", "language": "en_US", "category": "UTILITY",
		"components": []map[string]any{{"type": "BODY", "text": "Hi {{1}}, order {{2}} is ready"}, {"type": "FOOTER", "text": "Shop"}},
	}, nil)

	first := cloudSend(t, p, map[string]any{"to": "+" + alice, "type": "text", "text": map[string]any{"body": "hello", "preview_url": true}})
	if m := receive(t, contact, first); m.Text() != "hello" {
		t.Errorf("text: %q", m.Text())
	}
	for _, c := range []struct {
		name  string
		msg   map[string]any
		check func(*wasim.Message) bool
	}{
		{"image by id", map[string]any{"type": "image", "image": map[string]any{"id": image, "caption": "look"}},
			func(m *wasim.Message) bool { return m.Content().GetImageMessage().GetCaption() == "look" }},
		{"document by link", map[string]any{"type": "document", "document": map[string]any{"link": files.URL + "/files/report.pdf", "filename": "q3.pdf", "caption": "numbers"}},
			func(m *wasim.Message) bool { return m.Content().GetDocumentMessage().GetFileName() == "q3.pdf" }},
		{"video", map[string]any{"type": "video", "video": map[string]any{"id": video}},
			func(m *wasim.Message) bool { return m.Content().GetVideoMessage() != nil }},
		{"audio", map[string]any{"type": "audio", "audio": map[string]any{"id": audio}},
			func(m *wasim.Message) bool { return m.Content().GetAudioMessage().GetPTT() }},
		{"sticker as image", map[string]any{"type": "sticker", "sticker": map[string]any{"link": files.URL + "/files/photo.png"}},
			func(m *wasim.Message) bool { return m.Content().GetImageMessage() != nil }},
		{"location", map[string]any{"type": "location", "location": map[string]any{"latitude": 52.52, "longitude": 13.40, "name": "Office"}},
			func(m *wasim.Message) bool { return m.Location().GetName() == "Office" }},
		{"contacts", map[string]any{"type": "contacts", "contacts": []map[string]any{{"name": map[string]any{"formatted_name": "Bob B", "first_name": "Bob"},
			"phones": []map[string]any{{"phone": "+4915100000003", "wa_id": "4915100000003", "type": "CELL"}}}}},
			func(m *wasim.Message) bool { return m.Contact().GetDisplayName() == "Bob B" }},
		{"interactive buttons", map[string]any{"type": "interactive", "interactive": map[string]any{"type": "button", "body": map[string]any{"text": "Coming?"},
			"action": map[string]any{"buttons": []map[string]any{{"type": "reply", "reply": map[string]any{"id": "y", "title": "Yes"}}, {"type": "reply", "reply": map[string]any{"id": "n", "title": "No"}}}}}},
			func(m *wasim.Message) bool {
				return fmt.Sprint(m.Buttons()) == "[{y Yes} {n No}]" && m.Content().GetInteractiveMessage().GetBody().GetText() == "Coming?"
			}},
		{"template", map[string]any{"type": "template", "template": map[string]any{"name": "order_ready", "language": map[string]any{"code": "en_US"},
			"components": []map[string]any{{"type": "body", "parameters": []map[string]any{{"type": "text", "text": "Ana"}, {"type": "text", "text": "42"}}}}}},
			func(m *wasim.Message) bool { return m.Text() == "Hi Ana, order 42 is ready\n\nShop" }},
		{"reply", map[string]any{"type": "text", "context": map[string]any{"message_id": first}, "text": map[string]any{"body": "as I said"}},
			func(m *wasim.Message) bool { return m.Quoted() != nil && m.Quoted().ID == first }},
		{"reaction", map[string]any{"type": "reaction", "reaction": map[string]any{"message_id": first, "emoji": "👍"}},
			func(m *wasim.Message) bool {
				target, emoji, _, ok := m.Reaction()
				return ok && target == first && emoji == "👍"
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.msg["to"] = alice
			id := cloudSend(t, p, c.msg)
			if m := receive(t, contact, id); !c.check(m) {
				t.Errorf("the contact got %v", m.Content())
			}
		})
	}
	// The other door sees the first message under the same id.
	var entry struct {
		WhatsAppID string `json:"whatsapp_id"`
	}
	if code, raw := apiJSON(t, p, http.MethodGet, "/api/messages/"+first, "", &entry); code != http.StatusOK || entry.WhatsAppID != first {
		t.Errorf("the JSON door's log: %d %s", code, raw)
	}
	cloudReadAndMedia(t, p, sim, hooks, contact)
}

// cloudReadAndMedia: a received text is marked read through the door, a
// received photo is fetched through it, an upload is fetched and deleted.
func cloudReadAndMedia(t *testing.T, p *bridgeProcess, sim *wasim.Simulator, hooks *hookReceiver, contact *wasim.User) {
	t.Helper()
	asked := writeTo(t, contact, "are you there?")
	hooks.wait("message.upsert "+asked, func(e hookEvent) bool { return e.str("whatsapp_id") == asked })
	cloudJSON(t, p, http.MethodPost, "/"+cloudVersion+"/"+testAccount+"/messages",
		map[string]any{"messaging_product": "whatsapp", "status": "read", "message_id": asked}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := contact.WaitTick(ctx, asked, types.ReceiptTypeRead); err != nil {
		t.Errorf("no read receipt: %v", err)
	}
	photo := sendMediaAndWait(t, sim, hooks, wasim.Attachment{Kind: "image", Data: cloudPNG, MimeType: "image/png", Caption: "mine"})
	id, _, _ := mediaOf(t, photo)
	if got := cloudFetch(t, p, cloudVersion, id); !bytes.Equal(got, cloudPNG) {
		t.Errorf("incoming photo through the door: %q", got)
	}
	up := cloudUpload(t, p, "again.png", "image/png", cloudPNG)
	if got := cloudFetch(t, p, cloudVersion, up); !bytes.Equal(got, cloudPNG) {
		t.Errorf("upload through the door: %q", got)
	}
	var ok struct{ Success bool }
	cloudJSON(t, p, http.MethodDelete, "/"+cloudVersion+"/"+up, nil, &ok)
	if code, raw := cloudCall(t, p, http.MethodGet, "/"+cloudVersion+"/"+up, "", nil, testAPIKey); code != http.StatusBadRequest {
		t.Errorf("a deleted upload: %d %s", code, raw)
	}
}

// cloudFetch reads media id as Graph clients do: the media object, then
// its url with the same bearer token.
func cloudFetch(t *testing.T, p *bridgeProcess, version, id string) []byte {
	t.Helper()
	var obj struct {
		URL      string `json:"url"`
		MimeType string `json:"mime_type"`
		FileSize int64  `json:"file_size"`
	}
	cloudJSON(t, p, http.MethodGet, "/"+version+"/"+id+"?phone_number_id="+testAccount, nil, &obj)
	path := strings.TrimPrefix(obj.URL, "http://"+p.addr)
	code, raw := cloudCall(t, p, http.MethodGet, path, "", nil, testAPIKey)
	if code != http.StatusOK || int64(len(raw)) != obj.FileSize {
		t.Fatalf("media %s at %s: %d, %d bytes of %d", id, obj.URL, code, len(raw), obj.FileSize)
	}
	return raw
}

// Bad input gets Graph's error with its code, and stores nothing.
func TestCloudDoorErrors(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	files := mediaHost(t)
	p := linkedBridge(t, sim, t.TempDir(), append(hooks.env(), "CLOUD_MEDIA_HOSTS="+strings.TrimPrefix(files.URL, "http://"))...)
	messages := "/" + cloudVersion + "/" + testAccount + "/messages"
	for _, c := range []struct {
		name, path, body, token string
		status, code, sub       int
		bridgeCode              string
	}{
		{"no messaging_product", messages, `{"to":"` + alice + `","type":"text","text":{"body":"x"}}`, testAPIKey, 400, 100, 0, "missing_messaging_product"},
		{"unknown type", messages, `{"messaging_product":"whatsapp","to":"` + alice + `","type":"hologram"}`, testAPIKey, 400, 100, 0, "unknown_type"},
		{"bad number", messages, `{"messaging_product":"whatsapp","to":"12","type":"text","text":{"body":"x"}}`, testAPIKey, 400, 100, 0, "invalid_number"},
		{"empty text", messages, `{"messaging_product":"whatsapp","to":"` + alice + `","type":"text","text":{"body":" "}}`, testAPIKey, 400, 100, 0, "empty_text"},
		{"other phone id", "/" + cloudVersion + "/4915199999999/messages", `{"messaging_product":"whatsapp","to":"` + alice + `","type":"text","text":{"body":"x"}}`, testAPIKey, 400, 100, 33, "not_found"},
		{"wrong token", messages, `{"messaging_product":"whatsapp","to":"` + alice + `","type":"text","text":{"body":"x"}}`, "wrong-key-0123456789", 401, 190, 0, "unauthorized"},
		{"unknown media id", messages, `{"messaging_product":"whatsapp","to":"` + alice + `","type":"image","image":{"id":"nope"}}`, testAPIKey, 400, 100, 0, "unknown_upload"},
		{"link host not allowed", messages, `{"messaging_product":"whatsapp","to":"` + alice + `","type":"image","image":{"link":"http://example.com/a.png"}}`, testAPIKey, 400, 100, 0, "media_host_not_allowed"},
		{"redirect to another host", messages, `{"messaging_product":"whatsapp","to":"` + alice + `","type":"image","image":{"link":"` + files.URL + `/elsewhere"}}`, testAPIKey, 400, 131052, 0, "media_link_failed"},
		{"unknown template", messages, `{"messaging_product":"whatsapp","to":"` + alice + `","type":"template","template":{"name":"nope","language":{"code":"en"}}}`, testAPIKey, 400, 132001, 0, "template_not_found"},
		{"not json", messages, `{"messaging_product":`, testAPIKey, 400, 100, 0, "invalid_json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, raw := cloudCall(t, p, http.MethodPost, c.path, "application/json", []byte(c.body), c.token)
			var e graphError
			_ = json.Unmarshal(raw, &e)
			if code != c.status || e.Error.Code != c.code || e.Error.Subcode != c.sub || e.Error.BridgeCode != c.bridgeCode || e.Error.FBTraceID == "" {
				t.Errorf("%d %s, want %d code %d/%d %s", code, raw, c.status, c.code, c.sub, c.bridgeCode)
			}
		})
	}
	var page struct{ Messages []json.RawMessage }
	if code, raw := apiJSON(t, p, http.MethodGet, "/api/messages?limit=10", "", &page); code != http.StatusOK || len(page.Messages) != 0 {
		t.Errorf("refused sends stored messages: %s", raw)
	}
	// An Idempotency-Key repeated through the door answers the first id
	// and queues nothing more.
	text := []byte(`{"messaging_product":"whatsapp","to":"` + alice + `","type":"text","text":{"body":"once"}}`)
	var ids []string
	for range 2 {
		code, raw := cloudCall(t, p, http.MethodPost, messages, "application/json", text, testAPIKey, "Idempotency-Key: order-7")
		var sent cloudSent
		if code != http.StatusOK || json.Unmarshal(raw, &sent) != nil || len(sent.Messages) != 1 {
			t.Fatalf("keyed send: %d %s", code, raw)
		}
		ids = append(ids, sent.Messages[0].ID)
	}
	if code, raw := apiJSON(t, p, http.MethodGet, "/api/messages?limit=10", "", &page); code != http.StatusOK || len(page.Messages) != 1 || ids[0] != ids[1] {
		t.Errorf("a repeated key: ids %v, log %s", ids, raw)
	}
	// A number not on WhatsApp: accepted with an id, as Cloud accepts it;
	// its failure is a failed status with Meta's 131026.
	id := cloudSend(t, p, map[string]any{"to": "4915100009999", "type": "text", "text": map[string]any{"body": "anyone?"}})
	failed := hooks.wait("failed status", func(e hookEvent) bool { return e.str("whatsapp_id") == id && e.str("status") == "Failed" })
	body := encodeCloud(t, failed)
	if !bytes.Contains(body, []byte(`"status":"failed"`)) || !bytes.Contains(body, []byte(`"code":131026`)) {
		t.Errorf("the failed status in Cloud's format: %s", body)
	}
}

// cloudHookSecret signs the Cloud webhooks of the tests.
var cloudHookSecret = []byte("cloud-app-secret")

// encodeCloud encodes a delivered event in Cloud's format, checks it
// against the API description and its signature as a receiver checks it,
// and returns the body.
func encodeCloud(t *testing.T, e hookEvent) []byte {
	t.Helper()
	body, h, err := cloudapi.Encode(testAccount, webhook.Event{Type: e.str("event"), ID: e.ID, Payload: e.Payload}, cloudHookSecret)
	if err != nil {
		t.Fatalf("encode %+v: %v", e.Payload, err)
	}
	apitest.ValidateSchema(t, "CloudWebhook", body)
	mac := hmac.New(sha256.New, cloudHookSecret)
	mac.Write(body)
	if h.Get("X-Hub-Signature-256") != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
		t.Errorf("signature %q", h.Get("X-Hub-Signature-256"))
	}
	return body
}
