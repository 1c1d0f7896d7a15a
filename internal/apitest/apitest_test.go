package apitest_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/msgbridge/msgbridge/internal/apitest"
)

// fakeT captures what a validator reports instead of failing the test.
// Methods it does not override panic (the embedded TB is nil).
type fakeT struct {
	testing.TB
	name string
	mu   sync.Mutex
	errs []string
}

func (f *fakeT) Helper()      {}
func (f *fakeT) Name() string { return f.name }
func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatal(args ...any) { f.Errorf("%s", fmt.Sprint(args...)); panic("fatal") }

func (f *fakeT) reported() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.errs, "\n")
}

const (
	health     = `{"status":"online","whatsapp":"connected","uptime":1,"version":"1.2.3","timestamp":"2026-11-21T10:00:00.000Z"}`
	sendResult = `{"messages":[{"id":"m1","whatsapp_id":"3EB0","type":"text","status":"Sent","retry_count":0}]}`
	formType   = "application/x-www-form-urlencoded"
)

func errorBody(code string) string {
	return `{"error":{"code":"` + code + `","message":"m"}}`
}

// exchange is one request a test client sends and the answer a fake
// bridge gives it.
type exchange struct {
	name        string
	method      string
	target      string
	header      http.Header
	contentType string
	body        string
	off         bool // marked OffDocument
	status      int
	respType    string // application/json unless set
	resp        string
	want        string // a substring of what the validator reports; "" when it must report nothing
}

func TestTransport(t *testing.T) {
	key := http.Header{"X-Api-Key": {"k"}}
	admin := http.Header{"X-Admin-Token": {"a"}}
	mp, mpType := multipartBody(t, map[string]string{"number": "4915123456789", "type[]": "image", "text[]": "caption"}, true)
	for _, tc := range []exchange{
		{name: "documented", method: "GET", target: "/health", status: 200, resp: health},
		{name: "head", method: "HEAD", target: "/health", status: 200},
		{name: "undocumented status", method: "GET", target: "/health", status: 418, resp: errorBody("teapot"), want: "418"},
		{name: "extra field", method: "GET", target: "/health", status: 200,
			resp: strings.Replace(health, `"status"`, `"extra":1,"status"`, 1), want: "extra"},
		{name: "missing field", method: "GET", target: "/health", status: 200,
			resp: strings.Replace(health, `"uptime":1,`, "", 1), want: "uptime"},
		{name: "wrong content type", method: "GET", target: "/health", status: 200, respType: "text/plain", resp: health, want: "text/plain"},
		{name: "undocumented path", method: "GET", target: "/nope", status: 404, resp: errorBody("not_found"), want: "not in the API description"},
		{name: "undocumented method", method: "DELETE", target: "/health", status: 405, resp: errorBody("method_not_allowed"), want: "not in the API description"},
		{name: "off document", method: "GET", target: "/nope", off: true, status: 404, resp: errorBody("not_found")},
		{name: "off document answered 200", method: "GET", target: "/nope", off: true, status: 200, resp: health, want: "want 404 or 405"},
		{name: "undocumented error code", method: "GET", target: "/api/messages/x", header: key, status: 404, resp: errorBody("gone"), want: "not_found"},
		{name: "documented error code", method: "GET", target: "/api/messages/x", header: key, status: 404, resp: errorBody("not_found")},
		{name: "missing credential refused", method: "GET", target: "/api/messages", status: 401, resp: errorBody("unauthorized")},
		{name: "missing credential accepted", method: "GET", target: "/api/messages", status: 200, resp: `{"messages":[]}`, want: "accepted"},
		{name: "credential in query", method: "GET", target: "/api/messages?apiKey=k&limit=5", status: 200, resp: `{"messages":[]}`},
		{name: "invalid parameter refused", method: "GET", target: "/api/messages?limit=0", header: key, status: 400, resp: errorBody("invalid_limit")},
		{name: "invalid parameter accepted", method: "GET", target: "/api/messages?limit=0", header: key, status: 200, resp: `{"messages":[]}`, want: "accepted"},
		{name: "form", method: "POST", target: "/send", header: key, contentType: formType, status: 200, resp: sendResult,
			body: url.Values{"number": {"4915123456789"}, "type[]": {"text"}, "text[]": {"hi"}}.Encode()},
		{name: "form with unknown field accepted", method: "POST", target: "/send", header: key, contentType: formType, status: 200, resp: sendResult,
			body: url.Values{"number": {"4915123456789"}, "type[]": {"text"}, "colour": {"red"}}.Encode(), want: "colour"},
		{name: "form with unknown field refused", method: "POST", target: "/send", header: key, contentType: formType, status: 400,
			resp: errorBody("unknown_field"), body: url.Values{"number": {"1"}, "colour": {"red"}}.Encode()},
		{name: "form with apiKey field", method: "POST", target: "/send", contentType: formType, status: 202, resp: strings.Replace(sendResult, "Sent", "Queued", 1),
			body: url.Values{"number": {"4915123456789"}, "type": {"text"}, "text": {"hi"}, "apiKey": {"k"}}.Encode()},
		{name: "multipart", method: "POST", target: "/send", header: key, contentType: mpType, body: mp, status: 202,
			resp: strings.Replace(strings.Replace(sendResult, "Sent", "Queued", 1), `"text"`, `"image"`, 1)},
		{name: "pairing code json", method: "POST", target: "/session/pairing-code", header: admin, contentType: "application/json",
			body: `{"number":"4915123456789"}`, status: 200, resp: `{"code":"ABCD1234"}`},
		{name: "pairing code unknown json field accepted", method: "POST", target: "/session/pairing-code", header: admin, contentType: "application/json",
			body: `{"number":"4915123456789","x":1}`, status: 200, resp: `{"code":"ABCD1234"}`, want: "accepted"},
		{name: "admin state", method: "GET", target: "/api/admin/state", header: admin, status: 200,
			resp: `{"state":"unpaired","connected":false,"account":"","push_name":"","last_heartbeat":null,"connected_since":null,"reason":"","version":"0.0.0-dev","restricted_until":null}`},
		{name: "path parameter", method: "DELETE", target: "/api/admin/audit/3?week=2026-W47", header: admin, status: 200,
			resp: `{"id":"3","week":"2026-W47","deleted":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeT{name: t.Name()}
			got := roundTrip(t, ft, tc)
			if got != "" {
				t.Log(got)
			}
			switch {
			case tc.want == "" && got != "":
				t.Errorf("reported, want nothing:\n%s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("reported %q, want it to mention %q", got, tc.want)
			}
		})
	}
}

// roundTrip sends tc through a validating client to a fake bridge that
// answers as tc says, and returns what the validator reported.
func roundTrip(t *testing.T, ft *fakeT, tc exchange) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		ct := tc.respType
		if ct == "" {
			ct = "application/json; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(tc.status)
		_, _ = io.WriteString(w, tc.resp)
	}))
	defer srv.Close()
	var body io.Reader
	if tc.body != "" {
		body = strings.NewReader(tc.body)
	}
	req, err := http.NewRequest(tc.method, srv.URL+tc.target, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range tc.header {
		req.Header[k] = vs
	}
	if tc.contentType != "" {
		req.Header.Set("Content-Type", tc.contentType)
	}
	if tc.off {
		req = apitest.OffDocument(req)
	}
	client := &http.Client{Transport: apitest.Transport(ft, nil)}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != tc.status || string(got) != tc.resp {
		t.Errorf("the client got %d %q, want %d %q", resp.StatusCode, got, tc.status, tc.resp)
	}
	return ft.reported()
}

func multipartBody(t *testing.T, fields map[string]string, withFile bool) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if withFile {
		fw, err := w.CreateFormFile("file[]", "a.png")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write([]byte("\x89PNG\r\n\x1a\n"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String(), w.FormDataContentType()
}
