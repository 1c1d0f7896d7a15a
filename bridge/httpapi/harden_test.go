package httpapi

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/guard"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// countingReader is an upload that would go on for 64 MiB; it counts what
// the server took of it.
type countingReader struct{ n atomic.Int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n.Load() > 64<<20 {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = 'x'
	}
	c.n.Add(int64(len(p)))
	return len(p), nil
}

// filePartHead opens a multipart body whose next part is a file; the file's
// bytes follow from the countingReader.
func filePartHead(fields ...part) (string, string) {
	ct, body := multipartBody(fields...)
	head := strings.TrimSuffix(body.String(), "--"+boundaryOf(ct)+"--\r\n")
	return ct, head + "--" + boundaryOf(ct) + "\r\nContent-Disposition: form-data; name=\"file[]\"; filename=\"big.bin\"\r\n" +
		"Content-Type: application/octet-stream\r\n\r\n"
}

func boundaryOf(ct string) string { _, b, _ := strings.Cut(ct, "boundary="); return b }

// Item 1: without a key outside the body, a file part before a valid
// apiKey field is refused at once: the upload is not read, nothing spooled.
func TestSendKeyBeforeFile(t *testing.T) {
	for name, fields := range map[string][]part{
		"no key":                  {field("number", "4915100000002"), field("type[]", "document")},
		"wrong key before file":   {field("apiKey", "wrong-key-0123456789"), field("number", "4915100000002"), field("type[]", "document")},
		"key only after the file": {field("number", "4915100000002"), field("type[]", "document")},
	} {
		t.Run(name, func(t *testing.T) {
			e := newSendEnv(t)
			ct, head := filePartHead(fields...)
			upload := &countingReader{}
			status, raw := rawCall(t, e.url, ct, io.MultiReader(strings.NewReader(head), upload))
			if status != 401 || errorCode(t, raw) != "unauthorized" {
				t.Errorf("%d %s, want 401", status, raw)
			}
			if name != "wrong key before file" && !strings.Contains(raw, "before any file[] part") {
				t.Errorf("the 401 does not say where the key goes: %s", raw)
			}
			if n := upload.n.Load(); n > 16<<20 { // socket buffers take a few MiB
				t.Errorf("the server read %d bytes of the upload", n)
			}
			if n := e.spooled(t); n != 0 {
				t.Errorf("%d files spooled", n)
			}
		})
	}
}

// rawCall posts body to url on a raw connection, reading the answer while
// it writes: the server answers a refused upload early and closes, and an
// HTTP client still writing would see only the reset.
func rawCall(t *testing.T, url, contentType string, body io.Reader) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(url, "/send"), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		_, _ = fmt.Fprintf(c, "POST /send HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n", contentType)
		cw := httputil.NewChunkedWriter(c)
		_, _ = io.Copy(cw, body)
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// A valid key before the file admits it; the spool hashes what it stores.
func TestSendKeyFieldFirstSpoolsWithHash(t *testing.T) {
	e := newSendEnv(t)
	ct, body := multipartBody(field("apiKey", testAPIKey), field("number", "4915100000002"), field("type[]", "document"),
		file("a.pdf", string(pdfData)))
	if status, raw := call(t, http.MethodPost, e.url, body, "Content-Type: "+ct); status != http.StatusAccepted {
		t.Fatalf("%d %s", status, raw)
	}
	sum := sha256.Sum256(pdfData)
	if got := e.queue.submitted[0].Items[0].File.SHA256; got != hex.EncodeToString(sum[:]) {
		t.Errorf("SHA256 %q, want the content's", got)
	}
}

// Item 1: a spool at its bound answers 507 for an attachment, while text
// sends go on.
func TestSendSpoolFull(t *testing.T) {
	spool := t.TempDir()
	q := &fakeMessages{}
	srv := newTestServer(t, testDeps{Messages: q, Send: SendConfig{APIKey: testAPIKey, SpoolDir: spool, MaxFileSize: testMaxFile,
		SpoolMaxBytes: 2 * testMaxFile}})
	if err := os.WriteFile(filepath.Join(spool, "waiting.part"), make([]byte, testMaxFile+testMaxFile/2), 0o600); err != nil {
		t.Fatal(err)
	}
	ct, body := multipartBody(field("number", "4915100000002"), field("type[]", "document"), file("a.bin", strings.Repeat("d", testMaxFile)))
	status, raw := call(t, http.MethodPost, srv.URL+"/send", body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey)
	if status != http.StatusInsufficientStorage || errorCode(t, raw) != "insufficient_storage" {
		t.Errorf("attachment into a full spool: %d %s", status, raw)
	}
	if entries, _ := os.ReadDir(spool); len(entries) != 1 {
		t.Errorf("%d files in the spool, want only the one waiting", len(entries))
	}
	ct, body = multipartBody(field("number", "4915100000002"), field("type[]", "text"), field("text[]", "hi"))
	if status, raw := call(t, http.MethodPost, srv.URL+"/send", body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey); status != http.StatusAccepted {
		t.Errorf("text while the spool is full: %d %s", status, raw)
	}
}

// Item 9: failed credentials count per address and scope; past the limit
// even the right credential is 429 with Retry-After, the other scopes go
// on, and the refusals are audited a bounded number of times.
func TestCredentialLimit(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	log := openAuditLog(t, clock)
	rec := AuditRecorder{Trail: log, Logger: logr.Discard()}
	srv := newTestServer(t, testDeps{Now: clock, Audit: rec, Guard: guard.NewCredentials(rec, clock), Messages: &fakeMessages{}})
	for i := range guard.MaxFailures {
		if status, raw := call(t, http.MethodGet, srv.URL+"/api/admin/state", nil, "X-Admin-Token: wrong"); status != 401 {
			t.Fatalf("failure %d: %d %s", i, status, raw)
		}
	}
	for range 50 {
		resp := do(t, http.MethodGet, srv.URL+"/api/admin/state", nil, "X-Admin-Token: wrong-again")
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("wrong token from a locked address: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	// Item 4: the lock never refuses the right credential, so a stranger
	// sharing the operator's address cannot lock the operator out.
	if status, raw := call(t, http.MethodGet, srv.URL+"/api/admin/state", nil, adminHeader); status != 200 {
		t.Errorf("right token from a locked address: %d %s", status, raw)
	}
	if status, raw := call(t, http.MethodGet, srv.URL+"/api/messages", nil, "X-Api-Key: "+testAPIKey); status != 200 {
		t.Errorf("the API key while the admin token is locked: %d %s", status, raw)
	}
	for range guard.MaxFailures {
		call(t, http.MethodGet, srv.URL+"/api/messages", nil, "X-Api-Key: wrong")
	}
	ct, body := multipartBody(field("apiKey", testAPIKey), field("number", "4915100000002"), field("type[]", "text"), field("text[]", "hi"))
	if status, raw := call(t, http.MethodPost, srv.URL+"/send", body, "Content-Type: "+ct); status != 202 {
		t.Errorf("send with the right key in the form from a locked address: %d %s", status, raw)
	}
	ct, body = multipartBody(field("apiKey", "wrong"), field("number", "4915100000002"), field("type[]", "text"), field("text[]", "hi"))
	if status, raw := call(t, http.MethodPost, srv.URL+"/send", body, "Content-Type: "+ct); status != 429 || errorCode(t, raw) != "too_many_failures" {
		t.Errorf("send with a wrong key in the form from a locked address: %d %s", status, raw)
	}
	entries, err := log.List(t.Context(), audit.WeekOf(now))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, string(e.Action)+"/"+e.Detail)
	}
	want := []string{"api.admin_token/wrong admin token", "api.admin_token/wrong admin token; locked for 1m0s after 5 failures",
		"api.admin_token/rate limited", "api.api_key/wrong API key", "api.api_key/wrong API key; locked for 1m0s after 5 failures",
		"api.api_key/rate limited"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("audit\n got %q\nwant %q", got, want)
	}
	now = now.Add(guard.Window + time.Second)
	if status, _ := call(t, http.MethodGet, srv.URL+"/api/admin/state", nil, "X-Admin-Token: wrong"); status != 401 {
		t.Errorf("after the window: %d", status)
	}
}

// Item 4: behind a trusted proxy (an Ingress) each client is its own
// address: a stranger's wrong keys lock only the stranger, not the other
// clients of the proxy, nor the operator's reads of the admin state from
// inside the cluster; a stranger's own X-Forwarded-For is not believed.
func TestTrustedProxies(t *testing.T) {
	clock := func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) }
	log := openAuditLog(t, clock)
	rec := AuditRecorder{Trail: log, Logger: logr.Discard()}
	srv := newTestServer(t, testDeps{Now: clock, Audit: rec, Guard: guard.NewCredentials(rec, clock), Messages: &fakeMessages{},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	stranger, client := "X-Forwarded-For: 203.0.113.66", "X-Forwarded-For: 198.51.100.7"
	for range guard.MaxFailures + 3 {
		call(t, http.MethodGet, srv.URL+"/api/messages", nil, "X-Api-Key: wrong", stranger)
		call(t, http.MethodGet, srv.URL+"/api/admin/state", nil, "X-Admin-Token: wrong", stranger)
	}
	if status, raw := call(t, http.MethodGet, srv.URL+"/api/messages", nil, "X-Api-Key: wrong", stranger); status != 429 {
		t.Errorf("the stranger is not locked: %d %s", status, raw)
	}
	if status, raw := call(t, http.MethodGet, srv.URL+"/api/messages", nil, "X-Api-Key: wrong", client); status != 401 {
		t.Errorf("another client of the proxy is locked with the stranger: %d %s", status, raw)
	}
	if status, raw := call(t, http.MethodGet, srv.URL+"/api/admin/state", nil, adminHeader); status != 200 {
		t.Errorf("the operator's read of the admin state: %d %s", status, raw)
	}
	entries, err := log.List(t.Context(), audit.WeekOf(clock()))
	if err != nil || len(entries) == 0 || entries[0].Client != "203.0.113.66" {
		t.Errorf("the audit names %+v (%v), want the stranger's forwarded address", entries, err)
	}
}

// Item 11: a malformed query is never page 1; an empty cursor is no cursor.
func TestListMessagesStrictQuery(t *testing.T) {
	base, _ := newMessagesEnv(t)
	for query, want := range map[string]string{
		"cursor=%zz": "invalid_query",
		"cursor=":    "invalid_cursor",
		"limit=5&%":  "invalid_query",
	} {
		status, raw := call(t, http.MethodGet, base+"/api/messages?"+query, nil, "X-Api-Key: "+testAPIKey)
		if status != 400 || errorCode(t, raw) != want {
			t.Errorf("?%s: %d %s, want 400 %s", query, status, raw, want)
		}
	}
}

// limitedServer serves the API with the given body limits.
func limitedServer(t *testing.T, limits guard.Limits) (*httptest.Server, *fakeMessages) {
	q := &fakeMessages{}
	return newTestServer(t, testDeps{Messages: q, Limits: limits,
		Send: SendConfig{APIKey: testAPIKey, SpoolDir: t.TempDir(), MaxFileSize: testMaxFile}}), q
}

// rawPost opens a connection and sends the head of a POST /send that
// announces length bytes of body.
func rawPost(t *testing.T, srv *httptest.Server, length int, extra string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_, err = fmt.Fprintf(c, "POST /send HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n%sContent-Length: %d\r\n\r\n--B\r\n", extra, length)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// closedWithin reads c until the server ends it; it fails the test when
// the server still holds it after limit.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(limit))
	// A reset is a close too: the server closed with the client's bytes
	// unread while the client was still writing.
	var timeout net.Error
	if _, err := io.Copy(io.Discard, c); errors.As(err, &timeout) && timeout.Timeout() {
		t.Errorf("the server held the connection past %s: %v", limit, err)
	}
}

// Item 2: a body that stops arriving is dropped after the read gap; one
// that trickles is dropped at the whole-body deadline.
func TestBodyReadLimits(t *testing.T) {
	t.Run("stalled", func(t *testing.T) {
		srv, _ := limitedServer(t, guard.Limits{BodyReadGap: 300 * time.Millisecond, BodyDeadline: time.Minute, MaxUploads: 4})
		c := rawPost(t, srv, 100_000, "X-Api-Key: "+testAPIKey+"\r\n")
		closedWithin(t, c, 3*time.Second)
	})
	t.Run("trickling", func(t *testing.T) {
		srv, _ := limitedServer(t, guard.Limits{BodyReadGap: time.Second, BodyDeadline: 500 * time.Millisecond, MaxUploads: 4})
		c := rawPost(t, srv, 100_000, "X-Api-Key: "+testAPIKey+"\r\n")
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for range 100 {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}()
		closedWithin(t, c, 4*time.Second)
	})
}

// Item 2: uploads from clients without a credential in a header beyond the
// cap are 503 with Retry-After at once; a client with the key is not held
// back by them.
func TestUploadCap(t *testing.T) {
	srv, q := limitedServer(t, guard.Limits{BodyReadGap: 10 * time.Second, BodyDeadline: time.Minute, MaxUploads: 2})
	// Three uploads whose bodies never come: whichever the server takes
	// last finds both slots held and is the one answered, at once.
	type answer struct {
		resp *http.Response
		body []byte
	}
	answers := make(chan answer, 3)
	for range 3 {
		c := rawPost(t, srv, 100_000, "")
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return
			}
			defer func() { _ = resp.Body.Close() }()
			raw, _ := io.ReadAll(resp.Body)
			answers <- answer{resp, raw}
		}()
	}
	a := testutil.Receive(t, 5*time.Second, answers, func(answer) bool { return true }, "no upload was refused")
	resp, raw := a.resp, a.body
	if resp.StatusCode != 503 || errorCode(t, string(raw)) != "too_many_uploads" || resp.Header.Get("Retry-After") == "" || !resp.Close {
		t.Errorf("the upload beyond the cap: %d %s Retry-After %q close %v", resp.StatusCode, raw, resp.Header.Get("Retry-After"), resp.Close)
	}
	ct, body := multipartBody(field("number", "4915100000002"), field("type[]", "text"), field("text[]", "hi"))
	if status, raw := call(t, http.MethodPost, srv.URL+"/send", body, "Content-Type: "+ct, "X-Api-Key: "+testAPIKey); status != 202 {
		t.Errorf("send with the key in the header: %d %s", status, raw)
	}
	if len(q.submitted) != 1 {
		t.Errorf("%d submitted", len(q.submitted))
	}
}

// Item 13: net/http's own answers carry the error shape.
func TestNetHTTPErrorsInErrorShape(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Listener = JSONErrorListener(srv.Listener)
	srv.Config.MaxHeaderBytes = 4 << 10
	srv.Start()
	t.Cleanup(srv.Close)
	for name, c := range map[string]struct {
		request string
		status  int
		code    string
	}{
		"malformed request line":  {"GARBAGE\r\n\r\n", 400, "bad_request"},
		"no Host":                 {"GET / HTTP/1.1\r\n\r\n", 400, "bad_request"},
		"headers too large":       {"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n", 431, "headers_too_large"},
		"unknown transfer coding": {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "unsupported_transfer_encoding"},
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = conn.Close() }()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = io.WriteString(conn, c.request)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || errorCode(t, string(raw)) != c.code ||
				!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
			}
		})
	}
}
