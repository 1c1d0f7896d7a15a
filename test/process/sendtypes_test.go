package process

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
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
	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
	"github.com/msgbridge/msgbridge/bridge/httpapi/public"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// nothingIncoming is the session's Events port dropping what it receives
// (the receipts go to the message log, the session's Messages).
type nothingIncoming struct{}

func (nothingIncoming) Incoming(context.Context, bridge.Incoming) <-chan error {
	c := make(chan error, 1)
	c <- nil
	return c
}
func (nothingIncoming) Reconnected() {}

// inProcess is the bridge's messaging parts in this process, wired as
// app.go wires them, against the simulator, with the uploads' clock in the
// test's hand.
type inProcess struct {
	url     string
	spool   string
	uploads *spool.Uploads
	mu      sync.Mutex
	now     time.Time
}

func (p *inProcess) clock() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.now
}

func (p *inProcess) advance(d time.Duration) {
	p.mu.Lock()
	p.now = p.now.Add(d)
	p.mu.Unlock()
}

func startInProcess(t *testing.T, sim *wasim.Simulator) *inProcess {
	t.Helper()
	dir := t.TempDir()
	p := &inProcess{spool: filepath.Join(dir, "spool"), now: time.Now()}
	for _, d := range []string{p.spool, filepath.Join(dir, "credentials")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	db := testutil.OpenBridgeDBAt(t, filepath.Join(dir, "bridge.db"))
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	ctx, cancel := context.WithCancel(context.Background())
	log := sendqueue.NewMessageLog(sendqueue.MessageLogOptions{DB: db, Batcher: writer, Log: logr.Discard()})
	session, err := whatsapp.New(ctx, whatsapp.Options{
		CredentialsDir: filepath.Join(dir, "credentials"), SpoolDir: p.spool, MasterKey: testutil.TestKey(),
		DB: db, Batcher: writer, HeartbeatInterval: time.Second, Log: logr.Discard(), Events: nothingIncoming{}, Messages: log,
		Server: &whatsapp.Server{HTTPClient: sim.HTTPClient(), RootKey: sim.RootPublicKey()}, Quotes: log,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	queue := sendqueue.New(sendqueue.Options{Log: log, Sender: session, Schedule: []time.Duration{100 * time.Millisecond}})
	p.uploads = spool.NewUploads(spool.UploadOptions{DB: db, Batcher: writer, Dir: p.spool, Now: p.clock, Log: logr.Discard()})
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{session.Run, queue.Run} {
		wg.Go(func() { _ = run(ctx) })
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	auditLog, err := audit.Open(filepath.Join(dir, "audit"), testutil.TestKey(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = auditLog.Close() })
	srv := httptest.NewServer(httpapi.NewRouter(httpapi.Deps{
		Public: public.Deps{Link: session}, Admin: admin.Deps{Session: session},
		Messaging: messaging.Deps{Messages: queue, Uploads: p.uploads,
			Send: messaging.SendConfig{SpoolDir: p.spool, MaxFileSize: 1 << 20}},
		Credentials: httpapi.Credentials{APIKey: testAPIKey, AdminToken: testAdminToken},
		Audit:       httpapi.AuditRecorder{Trail: auditLog, Logger: logr.Discard()}, Log: logr.Discard(),
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	wasimtest.LinkBridge(t, sim.Phone(testAccount), p.url, testAdminToken)
	testutil.Eventually(t, 20*time.Second, session.Ready, "the session did not connect")
	return p
}

// call sends a request through the API description's validator.
func (p *inProcess) call(t *testing.T, path, contentType string, body io.Reader, into any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Api-Key", testAPIKey)
	resp, err := apitest.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
	}
	return resp.StatusCode
}

// An upload sent by two JSON sends reaches a contact and a group, each
// decrypted from its own copy; a reply through the form quotes the first;
// 24 hours later the upload is gone from the spool and its id refused.
func TestUploadSentTwiceThroughTheSimulator(t *testing.T) {
	testutil.SkipIfShort(t, "simulator")
	sim := wasim.Start(t)
	ann, bob := sim.Contact(alice, "Alice"), sim.Contact("4915100000003", "Bob")
	group := sim.CreateGroup("Team", sim.Phone(testAccount), ann, bob)
	p := startInProcess(t, sim)

	clip := append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), bytes.Repeat([]byte("frame"), 2000)...)
	ct, body := multipartBody(t, part{name: "file", fileName: "clip.mp4", data: clip})
	var up struct {
		UploadID string `json:"upload_id"`
		MimeType string `json:"mimetype"`
	}
	if status := p.call(t, "/api/uploads", ct, bytes.NewReader(body), &up); status != http.StatusCreated || up.MimeType != "video/mp4" {
		t.Fatalf("upload: %d %+v", status, up)
	}
	send := func(to string) string {
		var res sendResponse
		status := p.call(t, "/api/messages", "application/json", strings.NewReader(
			`{"to":"`+to+`","type":"video","text":"the clip","media":{"upload_id":"`+up.UploadID+`"}}`), &res)
		if status != http.StatusOK || len(res.Messages) != 1 {
			t.Fatalf("send to %s: %d %+v", to, status, res)
		}
		return res.Messages[0].WhatsAppID
	}
	toAlice, toGroup := send(ann.Number()), send(group.JID().String())
	ctx, cancel := context.WithTimeout(context.Background(), wasimtest.WaitTimeout)
	defer cancel()
	for _, got := range []struct {
		user *wasim.User
		id   string
	}{{ann, toAlice}, {ann, toGroup}, {bob, toGroup}} {
		m, err := got.user.WaitMessage(ctx, got.id)
		if err != nil || m.Media == nil || m.Media.Err != nil || m.Media.Kind != "video" || !bytes.Equal(m.Media.Data, clip) ||
			m.Media.Caption != "the clip" {
			t.Fatalf("%s got %s: %v %+v", got.user.Number(), got.id, err, m)
		}
	}

	ct, body = multipartBody(t, part{name: "number", value: ann.Number()}, part{name: "reply_to", value: toAlice},
		part{name: "type[]", value: "text"}, part{name: "text[]", value: "did it play?"})
	var res sendResponse
	if status := p.call(t, "/send", ct, bytes.NewReader(body), &res); status != http.StatusOK {
		t.Fatalf("reply: %d %+v", status, res)
	}
	reply, err := ann.WaitMessage(ctx, res.Messages[0].WhatsAppID)
	if q := reply.Quoted(); err != nil || q == nil || q.ID != toAlice || q.Participant != testAccount+"@s.whatsapp.net" ||
		q.Message.GetConversation() != "the clip" {
		t.Errorf("the reply quotes %+v (%v)", q, err)
	}

	p.advance(spool.UploadTTL)
	if n, err := p.uploads.Expire(ctx); n != 1 || err != nil {
		t.Fatalf("expired %d uploads: %v", n, err)
	}
	if left, _ := os.ReadDir(p.spool); len(left) != 0 {
		t.Errorf("the spool still holds %v", left)
	}
	var refused struct{ Error struct{ Code string } }
	if status := p.call(t, "/api/messages", "application/json", strings.NewReader(
		`{"to":"`+ann.Number()+`","type":"video","media":{"upload_id":"`+up.UploadID+`"}}`), &refused); status != 400 ||
		refused.Error.Code != "unknown_upload" {
		t.Errorf("the expired upload: %d %+v", status, refused)
	}
}
