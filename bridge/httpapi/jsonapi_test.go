package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// recordingSender is the queue's Sender port: always ready, it records
// what it sends.
type recordingSender struct {
	mu   sync.Mutex
	sent []bridge.Outgoing
	ids  int
}

func (s *recordingSender) Send(_ context.Context, out bridge.Outgoing) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := os.ReadFile(out.FilePath)
	if out.FilePath != "" && (err != nil || len(data) == 0) {
		return err
	}
	s.sent = append(s.sent, out)
	return nil
}

func (s *recordingSender) NewMessageID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return "3EB0" + strings.Repeat("0", 10) + string(rune('A'+s.ids%26))
}

func (s *recordingSender) Ready() bool { return true }

func (s *recordingSender) outgoing() []bridge.Outgoing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bridge.Outgoing(nil), s.sent...)
}

// jsonEnv is both front doors on the real queue and upload store over a
// real bridge.db; the session is a recording port.
type jsonEnv struct {
	base   string
	spool  string
	sender *recordingSender
	queue  *sendqueue.Queue
}

func newJSONEnv(t *testing.T) *jsonEnv { return newJSONEnvSpool(t, 0) }

// newJSONEnvSpool is newJSONEnv with a spool of at most spoolMax bytes.
func newJSONEnvSpool(t *testing.T, spoolMax int64) *jsonEnv {
	t.Helper()
	db := testutil.OpenBridgeDB(t)
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	e := &jsonEnv{spool: t.TempDir(), sender: &recordingSender{}}
	log := sendqueue.NewMessageLog(sendqueue.MessageLogOptions{DB: db, Batcher: writer, Log: logr.Discard()})
	e.queue = sendqueue.New(sendqueue.Options{Log: log, Sender: e.sender, Schedule: []time.Duration{time.Hour}})
	uploads := spool.NewUploads(spool.UploadOptions{DB: db, Batcher: writer, Dir: e.spool, Log: logr.Discard()})
	srv := newTestServer(t, testDeps{Messages: e.queue, Uploads: uploads,
		Send: SendConfig{APIKey: testAPIKey, SpoolDir: e.spool, MaxFileSize: testMaxFile, SpoolMaxBytes: spoolMax}})
	e.base = srv.URL
	return e
}

// Item 6: one file uploaded again takes no more of the spool, and a
// deleted upload gives its room back: four uploads of one file fit a spool
// of two, a different file fits once the others are deleted, and an id
// deleted (or never given) is 404.
func TestUploadsShareContentAndDelete(t *testing.T) {
	const size = 1000 // testMaxFile is 1024
	e := newJSONEnvSpool(t, 2*size+size/2)
	same := bytes.Repeat([]byte("a"), size)
	var ids []string
	for i := range 4 {
		ids = append(ids, e.upload(t, fmt.Sprintf("copy-%d.txt", i), same))
	}
	other := bytes.Repeat([]byte("b"), size)
	ct, body := multipartBody(part{name: "file", value: string(other), fileName: "other.txt"})
	call(t, http.MethodPost, e.base+"/api/uploads", body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey) // fits or not: either way
	del := func(id string) (int, string) {
		return call(t, http.MethodDelete, e.base+"/api/uploads/"+id, nil, "X-Api-Key: "+testAPIKey)
	}
	for _, id := range ids {
		if status, raw := del(id); status != http.StatusNoContent {
			t.Fatalf("delete %s: %d %s", id, status, raw)
		}
	}
	if status, raw := del(ids[0]); status != http.StatusNotFound || errorCode(t, raw) != "upload_not_found" {
		t.Errorf("a second delete: %d %s", status, raw)
	}
	if status, raw := del("no-such-upload"); status != http.StatusNotFound {
		t.Errorf("an unknown id: %d %s", status, raw)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		ct, body := multipartBody(part{name: "file", value: string(bytes.Repeat([]byte("c"), size)), fileName: "third.txt"})
		status, _ := call(t, http.MethodPost, e.base+"/api/uploads", body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey)
		return status == http.StatusCreated
	}, "the deleted uploads' room never came back")
}

func (e *jsonEnv) post(t *testing.T, body string, headers ...string) (int, string) {
	t.Helper()
	return call(t, http.MethodPost, e.base+"/api/messages", strings.NewReader(body),
		append(headers, "Content-Type: application/json", "X-Api-Key: "+testAPIKey)...)
}

func (e *jsonEnv) upload(t *testing.T, name string, data []byte) string {
	t.Helper()
	ct, body := multipartBody(part{name: "file", value: string(data), fileName: name})
	status, raw := call(t, http.MethodPost, e.base+"/api/uploads", body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey)
	var up messaging.UploadJSON
	if err := json.Unmarshal([]byte(raw), &up); status != http.StatusCreated || err != nil || up.UploadID == "" {
		t.Fatalf("upload: %d %s", status, raw)
	}
	return up.UploadID
}

// Every type through the JSON door reaches the session as the form's
// would; an upload sent twice goes twice, each from its own file.
func TestPostMessageTypes(t *testing.T) {
	e := newJSONEnv(t)
	voice := e.upload(t, "note.ogg", opusData)
	for _, body := range []string{
		`{"to":"+49 151 0000 0002","type":"text","text":"hi @4915100000003","reply_to":"3EB0AA","mentions":["4915100000003"]}`,
		`{"to":"4915100000002","type":"audio","media":{"upload_id":"` + voice + `"}}`,
		`{"to":"4915100000002","type":"audio","media":{"upload_id":"` + voice + `","ptt":false}}`,
		`{"to":"4915100000002","type":"location","location":{"latitude":-33.8568,"longitude":151.2153,"name":"Opera"}}`,
		`{"to":"4915100000002","type":"contact","contact":{"vcard":` + jsonString(testVCard) + `}}`,
		`{"to":"4915100000002","type":"poll","poll":{"question":"When?","options":["Mon","Tue","Wed"],"selectable_count":2}}`,
		`{"to":"4915100000002","type":"buttons","text":"Go?","buttons":[{"id":"go:yes","title":"Yes"},{"id":"go:no","title":"No"}]}`,
	} {
		if status, raw := e.post(t, body); status != http.StatusOK || !strings.Contains(raw, `"status":"Sent"`) {
			t.Fatalf("%s: %d %s", body, status, raw)
		}
	}
	sent := e.sender.outgoing()
	if len(sent) != 7 {
		t.Fatalf("%d sent", len(sent))
	}
	if sent[0].ReplyTo != "3EB0AA" || len(sent[0].Mentions) != 1 || sent[0].Mentions[0].ID != "4915100000003" {
		t.Errorf("text %+v", sent[0])
	}
	if !sent[1].PTT || sent[2].PTT || sent[1].FilePath == sent[2].FilePath || sent[1].MimeType != "audio/ogg; codecs=opus" {
		t.Errorf("audio %+v, %+v", sent[1], sent[2])
	}
	if l := sent[3].Location; l == nil || l.Latitude != -33.8568 || l.Name != "Opera" {
		t.Errorf("location %+v", l)
	}
	if c := sent[4].Contact; c == nil || c.DisplayName != "Bob Builder" {
		t.Errorf("contact %+v", c)
	}
	if p := sent[5].Poll; p == nil || p.Question != "When?" || len(p.Options) != 3 || p.Options[2] != "Wed" || p.Selectable != 2 {
		t.Errorf("poll %+v", p)
	}
	if b := sent[6].Buttons; len(b) != 2 || b[1] != (bridge.Button{ID: "go:no", Title: "No"}) || sent[6].Text != "Go?" {
		t.Errorf("buttons %+v under %q", b, sent[6].Text)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The JSON door refuses each fault with the same codes as the form, and
// keeps nothing of a refused message.
func TestPostMessageValidation(t *testing.T) {
	e := newJSONEnv(t)
	img := e.upload(t, "a.png", pngData)
	cases := []struct {
		body   string
		status int
		code   string
	}{
		{`{"to":"12ab","type":"text","text":"hi"}`, 400, "invalid_number"},
		{`{"to":"4915100000002","type":"text","text":" "}`, 400, "empty_text"},
		{`{"to":"4915100000002","type":"sticker"}`, 400, "unknown_type"},
		{`{"to":"4915100000002","type":"reaction"}`, 400, "unknown_type"},
		{`{"to":"4915100000002","type":"text","text":"hi","colour":1}`, 400, "invalid_json"},
		{`{"to":"4915100000002","type":"text","text":"hi"} {}`, 400, "invalid_json"},
		// Item 8: what encoding/json would read in its own way.
		{`{"to":"4915100000002","to":"4915100000003","type":"text","text":"hi"}`, 400, "invalid_json"},
		{`{"TO":"4915100000003","to":"4915100000002","type":"text","text":"hi"}`, 400, "invalid_json"},
		{`{"to":"4915100000002","type":"text","Text":"hi"}`, 400, "invalid_json"},
		{`{"to":"4915100000002","type":"image","media":{"upload_id":"a","UPLOAD_ID":"b"}}`, 400, "invalid_json"},
		{`null`, 400, "invalid_json"},
		{`[]`, 400, "invalid_json"},
		{"{\"to\":\"4915100000002\",\"type\":\"text\",\"text\":\"hi \xff\"}", 400, "invalid_text"},
		{`{"to":"4915100000002","type":"text","text":"hi \ud800"}`, 400, "invalid_text"},
		{`{"to":"4915100000002","type":"text","text":"hi \u0000"}`, 400, "invalid_text"},
		{`{"to":"4915100000002","type":"image"}`, 400, "missing_file"},
		{`{"to":"4915100000002","type":"image","media":{}}`, 400, "missing_file"},
		{`{"to":"4915100000002","type":"image","media":{"upload_id":"nope"}}`, 400, "unknown_upload"},
		{`{"to":"4915100000002","type":"video","media":{"upload_id":"` + img + `"}}`, 400, "invalid_video"},
		{`{"to":"4915100000002","type":"audio","media":{"upload_id":"` + img + `"}}`, 400, "invalid_audio"},
		{`{"to":"4915100000002","type":"image","media":{"upload_id":"` + img + `","ptt":true}}`, 400, "unexpected_ptt"},
		{`{"to":"4915100000002","type":"text","text":"hi","media":{"upload_id":"` + img + `"}}`, 400, "unexpected_file"},
		{`{"to":"4915100000002","type":"location"}`, 400, "missing_location"},
		{`{"to":"4915100000002","type":"location","location":{"latitude":91,"longitude":0}}`, 400, "invalid_location"},
		{`{"to":"4915100000002","type":"location","location":{"latitude":1}}`, 400, "invalid_location"},
		{`{"to":"4915100000002","type":"text","text":"hi","location":{"latitude":1,"longitude":1}}`, 400, "unexpected_location"},
		{`{"to":"4915100000002","type":"contact"}`, 400, "missing_vcard"},
		{`{"to":"4915100000002","type":"contact","contact":{}}`, 400, "missing_vcard"},
		{`{"to":"4915100000002","type":"contact","contact":{"vcard":"x"}}`, 400, "invalid_vcard"},
		{`{"to":"4915100000002","type":"poll"}`, 400, "missing_poll"},
		{`{"to":"4915100000002","type":"text","text":"hi","poll":{"question":"q","options":["a","b"]}}`, 400, "unexpected_poll"},
		{`{"to":"4915100000002","type":"poll","text":"hi","poll":{"question":"q","options":["a","b"]}}`, 400, "unexpected_text"},
		{`{"to":"4915100000002","type":"poll","poll":{"question":" ","options":["a","b"]}}`, 400, "invalid_poll_question"},
		{`{"to":"4915100000002","type":"poll","poll":{"question":"q","options":["a"]}}`, 400, "invalid_poll_options"},
		{`{"to":"4915100000002","type":"poll","poll":{"question":"q","options":["a",""]}}`, 400, "invalid_poll_option"},
		{`{"to":"4915100000002","type":"poll","poll":{"question":"q","options":["a","` + strings.Repeat("b", 101) + `"]}}`, 400, "invalid_poll_option"},
		{`{"to":"4915100000002","type":"poll","poll":{"question":"q","options":["a","a"]}}`, 400, "duplicate_poll_option"},
		{`{"to":"4915100000002","type":"poll","poll":{"question":"q","options":["a","b"],"selectable_count":3}}`, 400, "invalid_poll_selectable"},
		{`{"to":"4915100000002","type":"poll","poll":{"question":"q","options":["a","b"],"selectable_count":0}}`, 400, "invalid_poll_selectable"},
		{`{"to":"4915100000002","type":"buttons","text":"Go?"}`, 400, "missing_buttons"},
		{`{"to":"4915100000002","type":"text","text":"hi","buttons":[{"id":"a","title":"A"}]}`, 400, "unexpected_buttons"},
		{`{"to":"4915100000002","type":"buttons","text":" ","buttons":[{"id":"a","title":"A"}]}`, 400, "empty_text"},
		{`{"to":"4915100000002","type":"buttons","text":"Go?","buttons":[]}`, 400, "invalid_buttons"},
		{`{"to":"4915100000002","type":"buttons","text":"Go?","buttons":[{"id":"a","title":"A"},{"id":"b","title":"B"},{"id":"c","title":"C"},{"id":"d","title":"D"}]}`, 400, "invalid_buttons"},
		{`{"to":"4915100000002","type":"buttons","text":"Go?","buttons":[{"id":"","title":"A"}]}`, 400, "invalid_button_id"},
		{`{"to":"4915100000002","type":"buttons","text":"Go?","buttons":[{"id":"a\u0007","title":"A"}]}`, 400, "invalid_button_id"},
		{`{"to":"4915100000002","type":"buttons","text":"Go?","buttons":[{"id":"a","title":"` + strings.Repeat("x", 21) + `"}]}`, 400, "invalid_button_title"},
		{`{"to":"4915100000002","type":"buttons","text":"Go?","buttons":[{"id":"a","title":"A\nB"}]}`, 400, "invalid_button_title"},
		{`{"to":"4915100000002","type":"buttons","text":"Go?","buttons":[{"id":"a","title":"A"},{"id":"a","title":"B"}]}`, 400, "duplicate_button"},
		{`{"to":"status@broadcast","type":"text","text":"hi"}`, 400, "missing_status_recipients"},
		{`{"to":"status@broadcast","type":"text","text":"hi","status":{"recipients":[]}}`, 400, "missing_status_recipients"},
		{`{"to":"4915100000002","type":"text","text":"hi","status":{"recipients":["4915100000003"]}}`, 400, "unexpected_status"},
		{`{"to":"status@broadcast","type":"text","text":"hi","reply_to":"3EB0AAAA","status":{"recipients":["4915100000003"]}}`, 400, "unexpected_status_context"},
		{`{"to":"status@broadcast","type":"location","location":{"latitude":1,"longitude":1},"status":{"recipients":["4915100000003"]}}`, 400, "invalid_status_type"},
		{`{"to":"status@broadcast","type":"text","text":"hi","status":{"recipients":["120363025246125486@g.us"]}}`, 400, "invalid_status_recipient"},
		{`{"to":"status@broadcast","type":"text","text":"hi","status":{"recipients":["4915100000003","+49 151 0000 0003"]}}`, 400, "duplicate_status_recipient"},
		{`{"to":"status@broadcast","type":"text","text":"hi","status":{"recipients":[` + strings.Repeat(`"4915100000003",`, bridge.MaxStatusRecipients) + `"4915100000004"]}}`, 400, "too_many_status_recipients"},
		{`{"to":"status@broadcast","type":"text","text":"hi","status":{"recipients":["4915100000003"],"background_color":"blue"}}`, 400, "invalid_background_color"},
		{`{"to":"status@broadcast","type":"text","text":"hi","status":{"recipients":["4915100000003"],"font":"arial"}}`, 400, "invalid_font"},
		{`{"to":"status@broadcast","type":"image","media":{"upload_id":"` + img + `"},"status":{"recipients":["4915100000003"],"font":"system"}}`, 400, "unexpected_status_style"},
		{`{"to":"4915100000002","type":"text","text":"hi","reply_to":""}`, 400, "invalid_reply_to"},
		{`{"to":"4915100000002","type":"text","text":"hi","mentions":["x"]}`, 400, "invalid_mention"},
		{`{"to":"4915100000002","type":"text","text":"` + strings.Repeat("a", bridge.MaxTextBytes+1) + `"}`, 400, "text_too_long"},
		{`{"to":"4915100000002","type":"text","text":"` + strings.Repeat("a", messaging.MaxMessageJSON) + `"}`, 413, "body_too_large"},
	}
	for _, c := range cases {
		status, raw := e.post(t, c.body)
		if status != c.status || errorCode(t, raw) != c.code {
			t.Errorf("%.120s: %d %s, want %d %s", c.body, status, raw, c.status, c.code)
		}
	}
	if status, raw := call(t, http.MethodPost, e.base+"/api/messages", strings.NewReader(`{}`), "Content-Type: text/plain",
		"X-Api-Key: "+testAPIKey); status != 415 || errorCode(t, raw) != "unsupported_media_type" {
		t.Errorf("text/plain: %d %s", status, raw)
	}
	if status, raw := call(t, http.MethodPost, e.base+"/api/messages", strings.NewReader(`{"to":"4915100000002","type":"text","text":"hi"}`),
		"Content-Type: application/json", "X-Api-Key: wrong"); status != 401 ||
		errorCode(t, raw) != "unauthorized" {
		t.Errorf("wrong key: %d %s", status, raw)
	}
	if n := len(e.sender.outgoing()); n != 0 {
		t.Errorf("%d invalid messages sent", n)
	}
	if left, _ := os.ReadDir(e.spool); len(left) != 1 {
		t.Errorf("spool holds %d files, want the upload alone", len(left))
	}
}

// POST /api/uploads takes exactly one file part named file.
func TestPostUploadValidation(t *testing.T) {
	e := newJSONEnv(t)
	for _, c := range []struct {
		parts  []part
		status int
		code   string
	}{
		{nil, 400, "missing_file"},
		{[]part{field("other", "x")}, 400, "unknown_field"},
		{[]part{{name: "file", value: "a", fileName: "a"}, {name: "file", value: "b", fileName: "b"}}, 400, "unexpected_file"},
		{[]part{{name: "file", value: strings.Repeat("a", testMaxFile+1), fileName: "big"}}, 413, "file_too_large"},
	} {
		ct, body := multipartBody(c.parts...)
		status, raw := call(t, http.MethodPost, e.base+"/api/uploads", body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey)
		if status != c.status || errorCode(t, raw) != c.code {
			t.Errorf("%v: %d %s, want %d %s", c.parts, status, raw, c.status, c.code)
		}
	}
	if status, raw := call(t, http.MethodPost, e.base+"/api/uploads", strings.NewReader("{}"), "Content-Type: application/json",
		"X-Api-Key: "+testAPIKey); status != 415 || errorCode(t, raw) != "unsupported_media_type" {
		t.Errorf("JSON upload: %d %s", status, raw)
	}
	if left, _ := os.ReadDir(e.spool); len(left) != 0 {
		t.Errorf("%d files left in the spool", len(left))
	}
}

// One Idempotency-Key across both doors: the same request through the
// other door answers the first response and sends nothing; another
// request is 409.
func TestIdempotencyAcrossDoors(t *testing.T) {
	e := newJSONEnv(t)
	form := func(key, text string) (int, string) {
		ct, body := multipartBody(field("number", "4915100000002"), field("type[]", "text"), field("text[]", text))
		return call(t, http.MethodPost, e.base+"/send", body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey, "Idempotency-Key: "+key)
	}
	jsonText := func(key, text string) (int, string) {
		return e.post(t, `{"to":"+4915100000002","type":"text","text":`+jsonString(text)+`}`, "Idempotency-Key: "+key)
	}
	firstStatus, first := form("order-1", "hello")
	againStatus, again := jsonText("order-1", "hello")
	if againStatus != firstStatus || again != first {
		t.Errorf("the JSON repeat answered %d %s, the form %d %s", againStatus, again, firstStatus, first)
	}
	if status, raw := jsonText("order-1", "another"); status != 409 || errorCode(t, raw) != "idempotency_key_reused" {
		t.Errorf("another request on the key: %d %s", status, raw)
	}

	// The other way round, with an attachment: the form's file and the
	// upload of the same bytes and name are the same request.
	up := e.upload(t, "a.png", pngData)
	jsonStatus, jsonFirst := e.post(t, `{"to":"4915100000002","type":"image","media":{"upload_id":"`+up+`"}}`, "Idempotency-Key: pic-1")
	ct, body := multipartBody(field("number", "4915100000002"), field("type[]", "image"), file("a.png", string(pngData)))
	formStatus, formAgain := call(t, http.MethodPost, e.base+"/send", body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey,
		"Idempotency-Key: pic-1")
	if formStatus != jsonStatus || formAgain != jsonFirst {
		t.Errorf("the form repeat answered %d %s, the JSON %d %s", formStatus, formAgain, jsonStatus, jsonFirst)
	}
	ct, body = multipartBody(field("number", "4915100000002"), field("type[]", "image"), field("reply_to", "3EB0AA"),
		file("a.png", string(pngData)))
	if status, raw := call(t, http.MethodPost, e.base+"/send", body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey,
		"Idempotency-Key: pic-1"); status != 409 || errorCode(t, raw) != "idempotency_key_reused" {
		t.Errorf("the same image as a reply on the key: %d %s", status, raw)
	}
	if n := len(e.sender.outgoing()); n != 2 {
		t.Errorf("%d messages sent, want the 2 first requests'", n)
	}
}
