package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
)

const testMaxFile = 1 << 10

var (
	pngData = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 100)...)
	pdfData = []byte("%PDF-1.7 a document")
)

// part is one field of a multipart body: a file when fileName is set.
type part struct{ name, value, fileName string }

func field(name, value string) part { return part{name: name, value: value} }
func file(name, data string) part   { return part{name: "file[]", value: data, fileName: name} }
func multipartBody(parts ...part) (string, *bytes.Buffer) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		if p.fileName != "" {
			fw, _ := mw.CreateFormFile(p.name, p.fileName)
			_, _ = fw.Write([]byte(p.value))
			continue
		}
		_ = mw.WriteField(p.name, p.value)
	}
	_ = mw.Close()
	return mw.FormDataContentType(), &buf
}

// sendEnv is POST /send against a fake queue with a real spool directory.
type sendEnv struct {
	url   string
	spool string
	queue *fakeMessages
}

func newSendEnv(t *testing.T) *sendEnv {
	t.Helper()
	e := &sendEnv{spool: t.TempDir(), queue: &fakeMessages{}}
	srv := newTestServer(t, testDeps{Messages: e.queue, Send: SendConfig{APIKey: testAPIKey, SpoolDir: e.spool, MaxFileSize: testMaxFile}})
	e.url = srv.URL + "/send"
	return e
}

// spooled is the number of files left in the spool.
func (e *sendEnv) spooled(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir(e.spool)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func TestSendValidation(t *testing.T) {
	e := newSendEnv(t)
	key := field("apiKey", testAPIKey)
	num := field("number", "+49 151 0000 0002")
	text := func(s string) part { return field("text[]", s) }
	typ := func(s string) part { return field("type[]", s) }
	many := func(p part, n int) []part {
		out := make([]part, n)
		for i := range out {
			out[i] = p
		}
		return out
	}
	cases := []struct {
		name   string
		parts  []part
		status int
		code   string
	}{
		{"bad number", []part{key, field("number", "12ab"), typ("text"), text("hi")}, 400, "invalid_number"},
		{"number with leading dashes", []part{key, field("number", "--4915100000002"), typ("text"), text("hi")}, 400, "invalid_number"},
		{"group 0@g.us", []part{key, field("number", "0@g.us"), typ("text"), text("hi")}, 400, "invalid_number"},
		{"mixed type and type[]", []part{key, num, field("type", "text"), typ("text"), text("a"), text("b")}, 400, "mixed_field_forms"},
		{"no type", []part{key, num, text("hi")}, 400, "missing_type"},
		{"more texts than types", []part{key, num, typ("text"), text("a"), text("b")}, 400, "unexpected_text"},
		{"text too long", []part{key, num, typ("text"), text(strings.Repeat("a", bridge.MaxTextBytes+1))}, 400, "text_too_long"},
		{"text not UTF-8", []part{key, num, typ("text"), text("\xff\xfe")}, 400, "invalid_text"},
		{"empty text", []part{key, num, typ("text"), text("  ")}, 400, "empty_text"},
		{"image without file", []part{key, num, typ("image")}, 400, "missing_file"},
		{"image that is a PDF", []part{key, num, typ("image"), file("a.png", string(pdfData))}, 400, "invalid_image"},
		{"unknown type", []part{key, num, typ("sticker"), text("x")}, 400, "unknown_type"},
		{"reaction through a send", []part{key, num, typ("reaction"), text("x")}, 400, "unknown_type"},
		{"file without item", []part{key, num, typ("text"), text("hi"), file("a.pdf", string(pdfData))}, 400, "unexpected_file"},
		{"unknown field", []part{key, num, field("numbr", "1"), typ("text"), text("hi")}, 400, "unknown_field"},
		{"too many types", append([]part{key, num}, many(typ("text"), messaging.MaxItems+1)...), 400, "too_many_items"},
		{"too many files", append([]part{key, num}, many(file("a.pdf", string(pdfData)), messaging.MaxItems+1)...), 400, "too_many_items"},
		{"file too large", []part{key, num, typ("document"), file("big.pdf", strings.Repeat("a", testMaxFile+1))}, 413, "file_too_large"},
		{"fields too large", []part{key, num, typ("text"), text(strings.Repeat("a", bridge.MaxTextBytes)),
			field("text[]", strings.Repeat("a", messaging.MaxFieldBytes))}, 413, "body_too_large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ct, body := multipartBody(c.parts...)
			status, raw := call(t, http.MethodPost, e.url, body, "Content-Type: "+ct)
			if status != c.status || errorCode(t, raw) != c.code {
				t.Errorf("%d %s, want %d %s", status, raw, c.status, c.code)
			}
		})
	}
	if n := len(e.queue.submitted); n != 0 {
		t.Errorf("%d invalid requests were submitted", n)
	}
	if n := e.spooled(t); n != 0 {
		t.Errorf("%d spooled files left behind", n)
	}
}

func TestSendFormErrors(t *testing.T) {
	e := newSendEnv(t)
	form := "application/x-www-form-urlencoded"
	for _, c := range []struct {
		name, contentType, body string
		status                  int
		code                    string
	}{
		{"JSON", "application/json", `{"number":"4915100000002"}`, 415, "unsupported_media_type"},
		{"no content type", "", "number=1", 415, "unsupported_media_type"},
		{"file in a urlencoded form", form, "apiKey=" + testAPIKey + "&file[]=x", 415, "unsupported_media_type"},
		{"malformed urlencoded", form, "apiKey=" + testAPIKey + "&%zz", 400, "invalid_form"},
		{"urlencoded too large", form, "text[]=" + strings.Repeat("a", messaging.MaxFieldBytes+1), 413, "body_too_large"},
		{"multipart without boundary", "multipart/form-data", "--x", 400, "invalid_form"},
		{"malformed multipart", "multipart/form-data; boundary=B", "--B\r\nnot a part", 400, "invalid_form"},
		{"garbage as multipart", "multipart/form-data; boundary=B", "plain garbage, no boundary at all", 400, "invalid_form"},
		{"multipart without its closing boundary", "multipart/form-data; boundary=B", "--B\r\nContent-Disposition: form-data; name=\"number\"\r\n\r\n" +
			"4915100000002\r\n--B\r\nContent-Disposition: form-data; name=\"type[]\"\r\n\r\ntext\r\n--B\r\n" +
			"Content-Disposition: form-data; name=\"text[]\"\r\n\r\nhi\r\n--B\r\n", 400, "invalid_form"},
		{"urlencoded mixing text and text[]", form, "number=4915100000002&type[]=text&type[]=text&text=a&text[]=b", 400, "mixed_field_forms"},
		{"urlencoded mixing type and type[]", form, "number=4915100000002&type=text&type[]=text&text[]=a&text[]=b", 400, "mixed_field_forms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, raw := call(t, http.MethodPost, e.url, strings.NewReader(c.body), "Content-Type: "+c.contentType,
				"X-Api-Key: "+testAPIKey)
			if status != c.status || errorCode(t, raw) != c.code {
				t.Errorf("%d %s, want %d %s", status, raw, c.status, c.code)
			}
		})
	}
	// A spool that cannot be written is the bridge's fault, said without
	// its path.
	if err := os.RemoveAll(e.spool); err != nil {
		t.Fatal(err)
	}
	ct, body := multipartBody(field("number", "4915100000002"), field("type[]", "document"), file("a.pdf", string(pdfData)))
	status, raw := call(t, http.MethodPost, e.url, body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey)
	if status != 500 || errorCode(t, raw) != "spool_failed" || strings.Contains(raw, e.spool) {
		t.Errorf("missing spool: %d %s", status, raw)
	}
}

// 401 has one body whether the key is missing or wrong, wherever it is
// given; a wrong key outside the body is refused before the body is read.
func TestSendCredential(t *testing.T) {
	e := newSendEnv(t)
	send := func(headers []string, query string, parts ...part) (int, string) {
		ct, body := multipartBody(append(parts, field("number", "4915100000002"), field("type[]", "text"), field("text[]", "hi"))...)
		return call(t, http.MethodPost, e.url+query, body, append(headers, "Content-Type: "+ct)...)
	}
	missingStatus, missing := send(nil, "")
	if missingStatus != 401 || errorCode(t, missing) != "unauthorized" {
		t.Fatalf("missing key: %d %s", missingStatus, missing)
	}
	for name, c := range map[string]struct {
		headers []string
		query   string
		parts   []part
	}{
		"wrong in the header": {headers: []string{"X-Api-Key: wrong"}},
		"wrong in the query":  {query: "?apiKey=wrong"},
		"wrong in the body":   {parts: []part{field("apiKey", "wrong")}},
		"wrong header wins":   {headers: []string{"X-Api-Key: wrong"}, parts: []part{field("apiKey", testAPIKey)}},
	} {
		if status, body := send(c.headers, c.query, c.parts...); status != 401 || body != missing {
			t.Errorf("%s: %d %s, want the missing key's answer", name, status, body)
		}
	}
	for name, c := range map[string]struct {
		headers []string
		query   string
		parts   []part
	}{
		"header": {headers: []string{"X-Api-Key: " + testAPIKey}},
		"query":  {query: "?apiKey=" + url.QueryEscape(testAPIKey)},
		"body":   {parts: []part{field("apiKey", testAPIKey)}},
	} {
		if status, body := send(c.headers, c.query, c.parts...); status != http.StatusAccepted {
			t.Errorf("key in the %s: %d %s", name, status, body)
		}
	}
	if n := len(e.queue.submitted); n != 3 {
		t.Errorf("%d requests submitted, want the 3 authorized ones", n)
	}
}

// 200 when every item was sent on the immediate attempt, 202 when any
// waits, with its place and expected time, 422 when every item failed at
// once, with the reason; statuses are spelled as the log spells them; the
// queue receives the validated request.
func TestSendAccepted(t *testing.T) {
	e := newSendEnv(t)
	ct, body := multipartBody(field("number", "+49 151 0000 0002"), field("type[]", "text"), field("text[]", `line\nnext *bold*`),
		field("type[]", "image"), field("text[]", "caption"), file("a.png", string(pngData)),
		field("type[]", "document"), file(`C:\x\Q3 report.pdf`, string(pdfData)))
	status, raw := call(t, http.MethodPost, e.url, body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey)
	want := `{"messages":[{"id":"m0","whatsapp_id":"W0","type":"text","status":"Queued","retry_count":0,"queue_position":1,"scheduled_at":"2026-11-21T10:00:00.000Z"},` +
		`{"id":"m1","whatsapp_id":"W1","type":"image","status":"Queued","retry_count":0,"queue_position":2,"scheduled_at":"2026-11-21T10:00:03.000Z"},` +
		`{"id":"m2","whatsapp_id":"W2","type":"document","status":"Queued","retry_count":0,"queue_position":3,"scheduled_at":"2026-11-21T10:00:06.000Z"}]}` + "\n"
	if status != http.StatusAccepted || raw != want {
		t.Fatalf("queued: %d %s\nwant %s", status, raw, want)
	}
	req := e.queue.submitted[0]
	if req.Recipient.JID() != "4915100000002@s.whatsapp.net" || len(req.Items) != 3 || req.Items[0].Text != "line\nnext *bold*" ||
		req.Items[1].File.MimeType != "image/png" || req.Items[1].Text != "caption" ||
		req.Items[2].File.Name != "Q3 report.pdf" || req.Items[2].File.MimeType != "application/pdf" {
		t.Errorf("submitted %+v", req)
	}
	for _, it := range req.Items[1:] {
		if data, err := os.ReadFile(it.File.Path); err != nil || filepath.Dir(it.File.Path) != e.spool || it.File.Size != int64(len(data)) {
			t.Errorf("spooled %+v: %d bytes, %v", it.File, len(data), err)
		}
	}

	e.queue.status = bridge.StatusSent
	status, raw = call(t, http.MethodPost, e.url, strings.NewReader("number=120363025246125486@g.us&type[]=text&text[]=hi"),
		"Content-Type: application/x-www-form-urlencoded", "X-Api-Key: "+testAPIKey)
	if status != http.StatusOK || raw != `{"messages":[{"id":"m0","whatsapp_id":"W0","type":"text","status":"Sent","retry_count":0}]}`+"\n" {
		t.Errorf("sent: %d %s", status, raw)
	}
	if got := e.queue.submitted[1].Recipient.JID(); got != "120363025246125486@g.us" {
		t.Errorf("group recipient %q", got)
	}
	e.queue.status = bridge.StatusFailed
	if status, raw := call(t, http.MethodPost, e.url, strings.NewReader("number=4915100000002&type[]=text&text[]=hi"),
		"Content-Type: application/x-www-form-urlencoded", "X-Api-Key: "+testAPIKey); status != http.StatusUnprocessableEntity ||
		raw != `{"error":{"code":"not_on_whatsapp","message":"the number is not on WhatsApp"},`+
			`"messages":[{"id":"m0","whatsapp_id":"W0","type":"text","status":"Failed","retry_count":0,"reason":"not_on_whatsapp"}]}`+"\n" {
		t.Errorf("failed: %d %s", status, raw)
	}
}

// A repeated Idempotency-Key answers the first response; a malformed one
// is refused; a queue that cannot store answers 500 and keeps no file.
func TestSendIdempotencyAndStoreFailure(t *testing.T) {
	e := newSendEnv(t)
	post := func(headers ...string) (int, string) {
		return call(t, http.MethodPost, e.url, strings.NewReader("number=4915100000002&type[]=text&text[]=hi"),
			append(headers, "Content-Type: application/x-www-form-urlencoded", "X-Api-Key: "+testAPIKey)...)
	}
	first, firstBody := post("Idempotency-Key: order-1")
	again, againBody := post("Idempotency-Key: order-1")
	if first != again || firstBody != againBody || len(e.queue.submitted) != 1 {
		t.Errorf("repeat: %d %s, first %d %s; %d submitted", again, againBody, first, firstBody, len(e.queue.submitted))
	}
	for _, k := range []string{"has space", strings.Repeat("k", 256), "naïve"} {
		if status, body := post("Idempotency-Key: " + k); status != 400 || errorCode(t, body) != "invalid_idempotency_key" {
			t.Errorf("key %q: %d %s", k, status, body)
		}
	}
	e.queue.submitErr = errors.New("database is locked")
	ct, body := multipartBody(field("number", "4915100000002"), field("type[]", "document"), file("a.pdf", string(pdfData)))
	status, raw := call(t, http.MethodPost, e.url, body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey)
	if status != 500 || errorCode(t, raw) != "store_failed" || strings.Contains(raw, "locked") {
		t.Errorf("store failure: %d %s", status, raw)
	}
	if n := e.spooled(t); n != 0 {
		t.Errorf("%d spooled files left after the store failed", n)
	}
}

// An attachment over the limit is refused while it streams: the answer
// comes while the client is still sending, not after the whole body.
func TestSendTooLargeWhileStreaming(t *testing.T) {
	e := newSendEnv(t)
	// The body stays open until the test ends, or its time is up: the
	// transport waits for the body's writer before it reports a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		_ = mw.WriteField("number", "4915100000002")
		_ = mw.WriteField("type[]", "document")
		fw, _ := mw.CreateFormFile("file[]", "big.pdf")
		_, _ = fw.Write(bytes.Repeat([]byte("a"), 2*testMaxFile)) // over the limit, and then nothing more
		<-ctx.Done()
		_ = pw.CloseWithError(errors.New("test over"))
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-Api-Key", testAPIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("no answer while the body was still open: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || errorCode(t, string(raw)) != "file_too_large" {
		t.Errorf("%d %s", resp.StatusCode, raw)
	}
	if n := e.spooled(t); n != 0 {
		t.Errorf("%d spooled files left", n)
	}
	if !resp.Close {
		t.Error("the connection stays open for the unread rest of the body")
	}
}
