package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/cloudapi"
	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The Cloud API door mounted beside the bridge's own API, on the same use
// cases: the real queue, upload store and template store over a real
// bridge.db; the session is a recording port. Every call is checked
// against the API description.

const cloudAccount = "4915100000001"

type cloudEnv struct {
	base   string
	sender *recordingSender
	ids    *cloudapi.UserIDs
}

// newCloudEnv serves the door; maxFailures > 0 sets the real limit on
// failed credentials to that many.
func newCloudEnv(t *testing.T, maxFailures int) *cloudEnv {
	t.Helper()
	db := testutil.OpenBridgeDB(t)
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	ids, err := cloudapi.NewUserIDs(masterKey)
	if err != nil {
		t.Fatal(err)
	}
	e := &cloudEnv{sender: &recordingSender{}, ids: ids}
	dir := t.TempDir()
	log := sendqueue.NewMessageLog(sendqueue.MessageLogOptions{DB: db, Batcher: writer, Log: logr.Discard()})
	queue := sendqueue.New(sendqueue.Options{Log: log, Sender: e.sender, Schedule: []time.Duration{time.Hour}})
	uploads := spool.NewUploads(spool.UploadOptions{DB: db, Batcher: writer, Dir: dir, Log: logr.Discard()})
	space, chats := spool.NewSpace(dir, 0), &fakeChats{}
	d := testDeps{Messages: queue, Targets: queue, Uploads: uploads, Chats: chats, Inbox: fakeHistory{},
		Send:          SendConfig{APIKey: testAPIKey, SpoolDir: dir, MaxFileSize: 1 << 20, Space: space},
		CloudAPIPaths: cloudapi.PathPrefix,
		// The door is given no http.Handler of the API: it calls the use
		// cases, never the router.
		CloudAPI: func(checkKey KeyCheck) http.Handler {
			return cloudapi.New(cloudapi.Config{CheckKey: checkKey, Sending: sendqueue.Sending{Queue: queue, Log: logr.Discard()},
				Targets: queue, Chats: chats, Space: space, MaxFileSize: 1 << 20,
				Account: func() string { return cloudAccount }, Uploads: uploads, History: fakeHistory{},
				Templates: &cloudapi.Templates{DB: db, Batcher: writer}, UserIDs: ids, Log: logr.Discard()})
		}}
	if maxFailures > 0 {
		d.Audit = AuditRecorder{Trail: openAuditLog(t, nil), Logger: logr.Discard()}
		d.Guard = guard.NewCredentialsAllowing(d.Audit, time.Now, maxFailures)
	}
	e.base = newTestServer(t, d).URL
	return e
}

// graph calls the door with the API key as bearer token (validated against
// the API description unless plain) and returns the status and body.
func (e *cloudEnv) graph(t *testing.T, method, path, contentType, body string, headers ...string) (int, string) {
	t.Helper()
	if contentType != "" {
		headers = append(headers, "Content-Type: "+contentType)
	}
	return call(t, method, e.base+path, strings.NewReader(body), append([]string{"Authorization: Bearer " + testAPIKey}, headers...)...)
}

// plain is a call the API description does not describe (an unversioned
// path, an unknown one): not validated.
func (e *cloudEnv) plain(t *testing.T, method, path, contentType, body string, headers ...string) (plainAnswer, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ": ")
		req.Header.Set(name, value)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return plainAnswer{StatusCode: resp.StatusCode, Header: resp.Header}, string(raw)
}

// plainAnswer is a response's status and header (its body read and closed).
type plainAnswer struct {
	StatusCode int
	Header     http.Header
}

type graphErrorBody struct {
	Error struct {
		Message       string `json:"message"`
		Type          string `json:"type"`
		Code          int    `json:"code"`
		MsgbridgeCode string `json:"msgbridge_code"`
	} `json:"error"`
}

func graphError(t *testing.T, raw string) graphErrorBody {
	t.Helper()
	var g graphErrorBody
	if err := json.Unmarshal([]byte(raw), &g); err != nil || g.Error.Code == 0 {
		t.Fatalf("not Graph's error shape: %s", raw)
	}
	return g
}

type sentBody struct {
	Contacts []struct {
		Input  string `json:"input"`
		WaID   string `json:"wa_id"`
		UserID string `json:"user_id"`
	} `json:"contacts"`
	Messages []struct {
		ID string `json:"id"`
	} `json:"messages"`
}

func (e *cloudEnv) send(t *testing.T, body string) (int, sentBody, string) {
	t.Helper()
	status, raw := e.graph(t, http.MethodPost, "/v21.0/"+cloudAccount+"/messages", "application/json", body)
	var s sentBody
	_ = json.Unmarshal([]byte(raw), &s)
	return status, s, raw
}

// lastSent waits for the queue to hand the n-th message to the session.
func (e *cloudEnv) lastSent(t *testing.T, n int) bridge.Outgoing {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() bool { return len(e.sender.outgoing()) >= n }, "the message never reached the session")
	return e.sender.outgoing()[n-1]
}

func (e *cloudEnv) upload(t *testing.T, name, contentType string, data []byte) string {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("messaging_product", "whatsapp")
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{`form-data; name="file"; filename="` + name + `"`}
	h["Content-Type"] = []string{contentType}
	part, _ := mw.CreatePart(h)
	_, _ = part.Write(data)
	_ = mw.Close()
	status, raw := e.graph(t, http.MethodPost, "/v21.0/"+cloudAccount+"/media", mw.FormDataContentType(), buf.String())
	var up struct{ ID string }
	if err := json.Unmarshal([]byte(raw), &up); status != http.StatusOK || err != nil || up.ID == "" {
		t.Fatalf("upload: %d %s", status, raw)
	}
	return up.ID
}

// Item 1: a send names its contact by the user id the webhooks gave it
// (recipient, as pywa and whatsapp-api-js send it); the answer carries the
// contact's user id; an id this bridge did not issue is refused.
func TestCloudSendToUserID(t *testing.T) {
	e := newCloudEnv(t, 0)
	alice := bridge.PhoneRecipient("4915100000002")
	uid := e.ids.For(alice)
	status, sent, raw := e.send(t, `{"messaging_product":"whatsapp","recipient_type":"individual","recipient":"`+uid+`","type":"text","text":{"body":"hi"}}`)
	if status != http.StatusOK || len(sent.Contacts) != 1 || sent.Contacts[0].Input != uid || sent.Contacts[0].WaID != alice.ID ||
		sent.Contacts[0].UserID != uid {
		t.Fatalf("send to a user id: %d %s", status, raw)
	}
	if out := e.lastSent(t, 1); out.Recipient != alice || out.Text != "hi" {
		t.Errorf("sent %+v", out)
	}
	lid := bridge.Recipient{Kind: bridge.RecipientLID, ID: "123456789012345"}
	if status, _, raw := e.send(t, `{"messaging_product":"whatsapp","recipient":"`+e.ids.For(lid)+`","type":"text","text":{"body":"x"}}`); status != http.StatusOK {
		t.Fatalf("send to a hidden number's user id: %d %s", status, raw)
	}
	if out := e.lastSent(t, 2); out.Recipient != lid {
		t.Errorf("sent to %+v, want the LID", out.Recipient)
	}
	status, _, raw = e.send(t, `{"messaging_product":"whatsapp","recipient":"US.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","type":"text","text":{"body":"x"}}`)
	if status != http.StatusBadRequest || graphError(t, raw).Error.MsgbridgeCode != "unknown_user_id" {
		t.Errorf("a foreign user id: %d %s", status, raw)
	}
}

// Item 2: a document sent by media id goes under the filename the send
// gives it (Typebot uploads a blob and names it in the send).
func TestCloudDocumentFilenameByID(t *testing.T) {
	e := newCloudEnv(t, 0)
	id := e.upload(t, "blob", "application/pdf", []byte("%PDF-1.4 a report"))
	status, _, raw := e.send(t, `{"messaging_product":"whatsapp","to":"4915100000002","type":"document","document":{"id":"`+id+`","filename":"report.pdf"}}`)
	if status != http.StatusOK {
		t.Fatalf("send: %d %s", status, raw)
	}
	if out := e.lastSent(t, 1); out.FileName != "report.pdf" {
		t.Errorf("the document went as %q, want report.pdf", out.FileName)
	}
}

// Item 3: the template list filters by name and pages; parameter_format is
// kept and listed; a NAMED template is filled by parameter_name; {{1}} may
// repeat.
func TestCloudTemplates(t *testing.T) {
	e := newCloudEnv(t, 0)
	waba := cloudapi.WABAID(cloudAccount)
	path := "/v21.0/" + waba + "/message_templates"
	for _, tpl := range []string{
		`{"name":"a_first","language":"en","category":"UTILITY","components":[{"type":"BODY","text":"Code {{1}}, again {{1}}"}]}`,
		`{"name":"csat_survey","language":"en","category":"UTILITY","components":[{"type":"BODY","text":"Rate us"}]}`,
		`{"name":"greet","language":"en","category":"UTILITY","parameter_format":"NAMED","components":[{"type":"BODY","text":"Hi {{first_name}}, your code is {{code}}"}]}`,
	} {
		if status, raw := e.graph(t, http.MethodPost, path, "application/json", tpl); status != http.StatusOK {
			t.Fatalf("create: %d %s", status, raw)
		}
	}
	type page struct {
		Data []struct {
			Name            string `json:"name"`
			ParameterFormat string `json:"parameter_format"`
		} `json:"data"`
		Paging struct {
			Cursors struct{ After string } `json:"cursors"`
			Next    string                 `json:"next"`
		} `json:"paging"`
	}
	list := func(query string) page {
		t.Helper()
		status, raw := e.graph(t, http.MethodGet, path+query, "", "")
		var p page
		if err := json.Unmarshal([]byte(raw), &p); status != http.StatusOK || err != nil {
			t.Fatalf("list %s: %d %s", query, status, raw)
		}
		return p
	}
	if p := list("?name=csat_survey"); len(p.Data) != 1 || p.Data[0].Name != "csat_survey" {
		t.Errorf("?name=csat_survey: %+v", p)
	}
	first := list("?limit=2")
	if len(first.Data) != 2 || first.Data[0].Name != "a_first" || first.Paging.Next == "" || first.Paging.Cursors.After == "" {
		t.Fatalf("first page %+v", first)
	}
	next, _ := url.Parse(first.Paging.Next)
	if rest := list("?" + next.RawQuery); len(rest.Data) != 1 || rest.Data[0].Name != "greet" || rest.Data[0].ParameterFormat != "NAMED" || rest.Paging.Next != "" {
		t.Errorf("second page %+v", rest)
	}
	if all := list(""); len(all.Data) != 3 || all.Data[0].ParameterFormat != "POSITIONAL" {
		t.Errorf("every template %+v", all)
	}
	status, _, raw := e.send(t, `{"messaging_product":"whatsapp","to":"4915100000002","type":"template","template":{"name":"greet","language":{"code":"en"},
		"components":[{"type":"body","parameters":[{"type":"text","parameter_name":"code","text":"Zed"},{"type":"text","parameter_name":"first_name","text":"Ann"}]}]}}`)
	if status != http.StatusOK {
		t.Fatalf("named template: %d %s", status, raw)
	}
	if out := e.lastSent(t, 1); out.Text != "Hi Ann, your code is Zed" {
		t.Errorf("named template sent %q", out.Text)
	}
	status, _, raw = e.send(t, `{"messaging_product":"whatsapp","to":"4915100000002","type":"template","template":{"name":"a_first","language":{"code":"en"},
		"components":[{"type":"body","parameters":[{"type":"text","text":"42"}]}]}}`)
	if status != http.StatusOK {
		t.Fatalf("repeated placeholder: %d %s", status, raw)
	}
	if out := e.lastSent(t, 2); out.Text != "Code 42, again 42" {
		t.Errorf("repeated placeholder sent %q", out.Text)
	}
}

// Item 4: Typebot's credential dialog: debug_token names the business
// account in its scopes; subscribed_apps answers as Graph does.
func TestCloudSetupCalls(t *testing.T) {
	e := newCloudEnv(t, 0)
	waba := cloudapi.WABAID(cloudAccount)
	status, raw := e.graph(t, http.MethodGet, "/v21.0/debug_token?input_token="+testAPIKey, "", "")
	var dbg struct {
		Data struct {
			IsValid        bool `json:"is_valid"`
			GranularScopes []struct {
				Scope     string   `json:"scope"`
				TargetIDs []string `json:"target_ids"`
			} `json:"granular_scopes"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(raw), &dbg); status != http.StatusOK || err != nil || !dbg.Data.IsValid ||
		len(dbg.Data.GranularScopes) != 2 || dbg.Data.GranularScopes[0].TargetIDs[0] != waba {
		t.Errorf("debug_token: %d %s", status, raw)
	}
	if status, raw := e.graph(t, http.MethodGet, "/v21.0/debug_token?input_token=other", "", ""); status != http.StatusOK ||
		!strings.Contains(raw, `"is_valid":false`) {
		t.Errorf("debug_token of another token: %d %s", status, raw)
	}
	if status, raw := e.graph(t, http.MethodGet, "/v21.0/"+waba+"/subscribed_apps", "", ""); status != http.StatusOK ||
		!strings.Contains(raw, "whatsapp_business_api_data") {
		t.Errorf("GET subscribed_apps: %d %s", status, raw)
	}
	for _, method := range []string{http.MethodPost, http.MethodDelete} {
		if status, raw := e.graph(t, method, "/v21.0/"+waba+"/subscribed_apps", "", ""); status != http.StatusOK || !strings.Contains(raw, `"success":true`) {
			t.Errorf("%s subscribed_apps: %d %s", method, status, raw)
		}
	}
	if status, raw := e.graph(t, http.MethodGet, "/v21.0/1000000000000001/subscribed_apps", "", ""); status != http.StatusBadRequest ||
		graphError(t, raw).Error.MsgbridgeCode != "not_found" {
		t.Errorf("another business account's subscribed_apps: %d %s", status, raw)
	}
}

// Item 5: no version and a major-only version answer as a versioned path;
// an unknown path is 404 in Graph's shape.
func TestCloudPathsAndVersions(t *testing.T) {
	e := newCloudEnv(t, 0)
	body := `{"messaging_product":"whatsapp","to":"4915100000002","type":"text","text":{"body":"hi"}}`
	for _, path := range []string{"/" + cloudAccount + "/messages", "/v21/" + cloudAccount + "/messages", "/v23.0/" + cloudAccount + "/messages"} {
		resp, raw := e.plain(t, http.MethodPost, path, "application/json", body, "Authorization: Bearer "+testAPIKey)
		if resp.StatusCode != http.StatusOK || !strings.Contains(raw, `"messaging_product":"whatsapp"`) {
			t.Errorf("%s: %d %s", path, resp.StatusCode, raw)
		}
	}
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/v21.0/" + cloudAccount + "/unknown_edge"},
		{http.MethodPut, "/v21/" + cloudAccount + "/messages"},
	} {
		resp, raw := e.plain(t, c.method, c.path, "", "", "Authorization: Bearer "+testAPIKey)
		g := graphError(t, raw)
		if resp.StatusCode != http.StatusNotFound || g.Error.Code != cloudapi.CodeInvalidParameter ||
			!strings.Contains(g.Error.Message, "Unsupported "+strings.ToLower(c.method)+" request") {
			t.Errorf("%s %s: %d %s", c.method, c.path, resp.StatusCode, raw)
		}
	}
}

// Items 6 and 8: the credential is checked before the phone number id and
// the body; each wrong one counts, and past the limit the answer is still
// an auth error (190, 429), not a throughput limit.
func TestCloudCredentialFirst(t *testing.T) {
	e := newCloudEnv(t, 3)
	for i, path := range []string{"/v21.0/999/messages", "/v21.0/" + cloudAccount + "/messages", "/v21.0/" + cloudAccount + "/messages"} {
		resp, raw := e.plain(t, http.MethodPost, path, "application/json", `not json`, "Authorization: Bearer wrong-token")
		if g := graphError(t, raw); resp.StatusCode != http.StatusUnauthorized || g.Error.Code != cloudapi.CodeAccessToken {
			t.Errorf("wrong token %d on %s: %d %s", i, path, resp.StatusCode, raw)
		}
	}
	resp, raw := e.plain(t, http.MethodPost, "/v21.0/"+cloudAccount+"/messages", "application/json", `{}`, "Authorization: Bearer wrong-token")
	g := graphError(t, raw)
	if resp.StatusCode != http.StatusTooManyRequests || g.Error.Code != cloudapi.CodeAccessToken || resp.Header.Get("Retry-After") == "" {
		t.Errorf("past the limit: %d %s (Retry-After %q)", resp.StatusCode, raw, resp.Header.Get("Retry-After"))
	}
}

// Item 7: media served by the door is never shown inline: an HTML file a
// contact sent is an attachment, nosniff, in a sandbox.
func TestCloudMediaFileIsAttachment(t *testing.T) {
	e := newCloudEnv(t, 0)
	id := e.upload(t, "page.html", "text/html", []byte("<html><script>alert(1)</script></html>"))
	resp, _ := e.plain(t, http.MethodGet, "/v21.0/"+id+"/file", "", "", "Authorization: Bearer "+testAPIKey)
	h := resp.Header
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(h.Get("Content-Disposition"), "attachment") ||
		h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Security-Policy") != "sandbox" {
		t.Errorf("media file: %d %v", resp.StatusCode, h)
	}
}

// Item 8: the error names the request's method; a form-encoded send is
// taken; a text over Cloud's 4,096 characters is refused; a wamid. id is
// taken in a reaction.
func TestCloudSmallerOnes(t *testing.T) {
	e := newCloudEnv(t, 0)
	status, raw := e.graph(t, http.MethodDelete, "/v21.0/0a1b2c3d-0000-4000-8000-000000000000", "", "")
	if g := graphError(t, raw); status != http.StatusBadRequest || !strings.Contains(g.Error.Message, "Unsupported delete request") ||
		g.Error.Type != "GraphMethodException" {
		t.Errorf("delete of nothing: %d %s", status, raw)
	}
	form := url.Values{"messaging_product": {"whatsapp"}, "to": {"4915100000002"}, "type": {"text"}, "text": {`{"body":"from a form"}`}}
	status, raw = e.graph(t, http.MethodPost, "/v21.0/"+cloudAccount+"/messages", "application/x-www-form-urlencoded", form.Encode())
	if status != http.StatusOK {
		t.Fatalf("form send: %d %s", status, raw)
	}
	if out := e.lastSent(t, 1); out.Text != "from a form" {
		t.Errorf("form send went as %q", out.Text)
	}
	text := func(n int) string {
		return `{"messaging_product":"whatsapp","to":"4915100000002","type":"text","text":{"body":"` + strings.Repeat("é", n) + `"}}`
	}
	if status, _, raw := e.send(t, text(4097)); status != http.StatusBadRequest || graphError(t, raw).Error.Code != cloudapi.CodeParamInvalid {
		t.Errorf("4,097 characters: %d %s", status, raw)
	}
	status, sent, raw := e.send(t, text(4096))
	if status != http.StatusOK {
		t.Fatalf("4,096 characters: %d %s", status, raw)
	}
	e.lastSent(t, 2)
	reaction := `{"messaging_product":"whatsapp","to":"4915100000002","type":"reaction","reaction":{"message_id":"wamid.` + sent.Messages[0].ID + `","emoji":"👍"}}`
	if status, _, raw := e.send(t, reaction); status != http.StatusOK {
		t.Errorf("a reaction to a wamid. id: %d %s", status, raw)
	}
}
