package dashboard

import (
	"bufio"
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi"
	"github.com/msgbridge/msgbridge/bridge/httpapi/admin"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
	"github.com/msgbridge/msgbridge/bridge/httpapi/public"
	"github.com/msgbridge/msgbridge/bridge/logging"
	"github.com/msgbridge/msgbridge/bridge/notify"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/internal/fakes"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// fakeLog is the message log: one failed message. Only List is used.
type fakeLog struct{ messaging.Messages }

func (fakeLog) List(context.Context, sendqueue.Filter) ([]bridge.Message, string, error) {
	return []bridge.Message{{ID: "m1", WhatsAppID: "3EB0A", Recipient: bridge.PhoneRecipient("4915100000002"),
		Type: bridge.TypeText, Status: bridge.StatusFailed, RetryCount: 3, LastError: "not on WhatsApp",
		CreatedAt: time.Unix(1, 0), UpdatedAt: time.Unix(2, 0)}}, "", nil
}

// ListSaid is List with what the message said.
func (l fakeLog) ListSaid(ctx context.Context, f sendqueue.Filter) ([]sendqueue.Said, string, error) {
	msgs, next, err := l.List(ctx, f)
	out := make([]sendqueue.Said, len(msgs))
	for i, m := range msgs {
		out[i] = sendqueue.Said{Message: m, Text: "see you at 9", ReplyTo: "3EB09"}
	}
	return out, next, err
}

// fakeDeadLetters holds one dead letter, id 7, until it is redelivered.
type fakeDeadLetters struct {
	mu          sync.Mutex
	redelivered []int64
}

func (f *fakeDeadLetters) Failed(context.Context) ([]webhook.DeadLetter, error) {
	return []webhook.DeadLetter{{ID: 7, WebhookID: "msg_7", Event: "message.status", Attempts: 9, LastError: "receiver answered 500"}}, nil
}

func (f *fakeDeadLetters) Redeliver(_ context.Context, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id != 7 {
		return webhook.ErrUnknown
	}
	f.redelivered = append(f.redelivered, id)
	return nil
}

// fakeLogFiles has today's info file, once.
type fakeLogFiles struct{ removed []string }

func (f *fakeLogFiles) Remove(day time.Time, level logging.Level) error {
	name := day.Format(time.DateOnly) + "." + level.String()
	for _, r := range f.removed {
		if r == name {
			return fs.ErrNotExist
		}
	}
	f.removed = append(f.removed, name)
	return nil
}

// fakeMedia serves one photo, as the media store does: privately cacheable.
type fakeMedia struct{}

func (fakeMedia) Open(_ context.Context, id string) (*bridge.MediaFile, error) {
	if id != "photo" {
		return nil, bridge.ErrMediaNotFound
	}
	return &bridge.MediaFile{ID: id, MimeType: "image/jpeg", Content: nopSeekCloser{strings.NewReader("jpeg bytes")}}, nil
}

type nopSeekCloser struct{ io.ReadSeeker }

func (nopSeekCloser) Close() error { return nil }

// apiDashboard is a dashboard with DashboardAPI over fakes of the ports,
// and its traffic.
func apiDashboard(t *testing.T) (*browser, *fakeDeadLetters, *notify.Changes) {
	t.Helper()
	l, err := audit.Open(filepath.Join(t.TempDir(), "audit"), testutil.TestKey(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	rec := httpkit.AuditRecorder{Trail: l, Logger: logr.Discard()}
	sess, dead, traffic := &fakes.Session{}, &fakeDeadLetters{}, &notify.Changes{}
	deps := httpapi.Deps{Public: public.Deps{Link: sess},
		Admin:     admin.Deps{Session: sess, Webhooks: dead, LogFiles: &fakeLogFiles{}},
		Messaging: messaging.Deps{Messages: fakeLog{}, Media: fakeMedia{}}, Audit: rec, Log: logr.Discard()}
	d := New(Options{Session: sess, AdminToken: adminToken, Audit: rec, Log: logr.Discard(),
		API: DataAPI(DataDeps{Admin: deps.Admin, Messaging: deps.Messaging, Audit: rec, Log: logr.Discard()}), Traffic: traffic})
	deps.Dashboard = d
	srv := httptest.NewServer(httpapi.NewRouter(deps))
	t.Cleanup(srv.Close)
	t.Cleanup(d.Close)
	b := newDashboardClient(t, srv.URL)
	return b, dead, traffic
}

// answer is a response's status, headers and body.
type answer struct {
	StatusCode int
	Header     http.Header
}

// call sends a JSON request of the page: with the CSRF header when csrf,
// and the other headers given as name, value.
func (b *browser) call(method, path string, csrf bool, headers ...string) (answer, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	if csrf {
		req.Header.Set(csrfHeader, b.csrf)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header}, string(body)
}

// The pages' reads need the session; their changes the CSRF token too;
// nothing is cached, a photo included.
func TestAPIBehindTheSession(t *testing.T) {
	b, dead, _ := apiDashboard(t)
	if resp, body := b.call(http.MethodGet, "/dashboard/api/messages", false); resp.StatusCode != 401 || code(t, body) != "not_signed_in" {
		t.Fatalf("not signed in: %d %s", resp.StatusCode, body)
	}
	b.signIn(adminToken)
	resp, body := b.call(http.MethodGet, "/dashboard/api/messages?status=Failed", false)
	if resp.StatusCode != 200 || !strings.Contains(body, `"last_error":"not on WhatsApp"`) || !strings.Contains(body, `"retry_count":3`) ||
		!strings.Contains(body, `"text":"see you at 9"`) || !strings.Contains(body, `"reply_to":"3EB09"`) {
		t.Errorf("messages: %d %s", resp.StatusCode, body)
	}
	if resp, body := b.call(http.MethodGet, "/dashboard/api/messages?status=Lost", false); resp.StatusCode != 400 || code(t, body) != "invalid_status" {
		t.Errorf("bad filter: %d %s", resp.StatusCode, body)
	}
	resp, body = b.call(http.MethodGet, "/dashboard/api/media/photo", false)
	if resp.StatusCode != 200 || body != "jpeg bytes" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("photo: %d %q, Cache-Control %q", resp.StatusCode, body, resp.Header.Get("Cache-Control"))
	}
	if resp, body := b.call(http.MethodGet, "/dashboard/api/webhooks/failed", false); resp.StatusCode != 200 || !strings.Contains(body, `"id":7`) {
		t.Errorf("dead letters: %d %s", resp.StatusCode, body)
	}
	if resp, body := b.call(http.MethodPost, "/dashboard/api/webhooks/7/redeliver", false); resp.StatusCode != 403 || code(t, body) != "csrf" {
		t.Errorf("redeliver without the CSRF token: %d %s", resp.StatusCode, body)
	}
	if resp, body := b.call(http.MethodPost, "/dashboard/api/webhooks/7/redeliver", true, "Sec-Fetch-Site", "cross-site"); resp.StatusCode != 403 || code(t, body) != "csrf" {
		t.Errorf("redeliver from another site: %d %s", resp.StatusCode, body)
	}
	if resp, body := b.call(http.MethodPost, "/dashboard/api/webhooks/7/redeliver", true); resp.StatusCode != 200 || len(dead.redelivered) != 1 {
		t.Errorf("redeliver: %d %s, redelivered %v", resp.StatusCode, body, dead.redelivered)
	}
	purge := "/dashboard/api/logs?" + url.Values{"date": {time.Now().UTC().Format(time.DateOnly)}, "level": {"info"}}.Encode()
	if resp, body := b.call(http.MethodDelete, purge, false); resp.StatusCode != 403 {
		t.Errorf("purge without the CSRF token: %d %s", resp.StatusCode, body)
	}
	if resp, body := b.call(http.MethodDelete, purge, true); resp.StatusCode != 200 {
		t.Errorf("purge: %d %s", resp.StatusCode, body)
	}
	_, body = b.call(http.MethodGet, "/dashboard/api/audit", false)
	for _, want := range []string{`"action":"webhooks.redeliver"`, `"action":"logs.purge"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the audit list lacks %s: %s", want, body)
		}
	}
}

// A change of the messages reaches the open event stream as a traffic
// event.
func TestTrafficEvent(t *testing.T) {
	b, _, traffic := apiDashboard(t)
	b.signIn(adminToken)
	resp, err := b.client.Get(b.base + "/dashboard/events")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	lines := bufio.NewScanner(resp.Body)
	next := func() string {
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, "event: ") {
				return strings.TrimPrefix(l, "event: ")
			}
		}
		t.Fatalf("the stream ended: %v", lines.Err())
		return ""
	}
	if ev := next(); ev != "state" {
		t.Fatalf("first event %q", ev)
	}
	traffic.Notify()
	if ev := next(); ev != "traffic" {
		t.Errorf("after a change: %q, want traffic", ev)
	}
}
