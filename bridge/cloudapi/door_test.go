package cloudapi

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The door is given no handler to call: nothing in its Config is an
// http.Handler (or makes one), so it cannot reach the bridge's router.
func TestDoorConfigHoldsNoHandler(t *testing.T) {
	handler := reflect.TypeFor[http.Handler]()
	cfg := reflect.TypeFor[Config]()
	for i := range cfg.NumField() {
		f := cfg.Field(i)
		if f.Type.Implements(handler) {
			t.Errorf("Config.%s (%s) is a handler", f.Name, f.Type)
		}
		if f.Type.Kind() == reflect.Func {
			for j := range f.Type.NumOut() {
				if f.Type.Out(j).Implements(handler) {
					t.Errorf("Config.%s (%s) makes a handler", f.Name, f.Type)
				}
			}
		}
	}
}

// The door serves alone, with no router of the bridge behind it: an
// upload, a send of it, a reaction to the sent message, a read mark and a
// delete, each on the real use cases over a real bridge.db; a wrong key is
// refused before any of them.
func TestDoorServesOnUseCasesAlone(t *testing.T) {
	db := testutil.OpenBridgeDB(t)
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	dir := t.TempDir()
	sender := &sessionPort{}
	log := sendqueue.NewMessageLog(sendqueue.MessageLogOptions{DB: db, Batcher: writer, Log: logr.Discard()})
	queue := sendqueue.New(sendqueue.Options{Log: log, Sender: sender, Schedule: []time.Duration{time.Hour}})
	uploads := spool.NewUploads(spool.UploadOptions{DB: db, Batcher: writer, Dir: dir, Log: logr.Discard()})
	chats := &readMarks{}
	srv := httptest.NewServer(New(Config{
		CheckKey: func(_ http.ResponseWriter, _ *http.Request, presented string) (bridge.Caller, error) {
			if subtle.ConstantTimeCompare([]byte(presented), []byte("key")) != 1 {
				return bridge.Caller{}, bridge.Errorf(bridge.KindUnauthorized, bridge.CodeUnauthorized, "wrong key")
			}
			return bridge.Owner(), nil
		},
		Sending: sendqueue.Sending{Queue: queue, Log: logr.Discard()}, Targets: queue,
		Space: spool.NewSpace(dir, 0), MaxFileSize: 1 << 20, Uploads: uploads,
		Account: func() string { return testAccount }, Log: logr.Discard(),
		History: receivedOne{id: "3A0RECEIVED", chat: bridge.PhoneRecipient("4915100000003")}, Chats: chats,
	}))
	t.Cleanup(srv.Close)
	graph := func(method, path, contentType, body, key string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body)) //nolint:noctx // the test's own server
		req.Header.Set("Authorization", "Bearer "+key)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}

	if status, raw := graph(http.MethodPost, "/v21.0/"+testAccount+"/messages", "application/json", `{}`, "wrong"); status != http.StatusUnauthorized ||
		!strings.Contains(raw, `"code":190`) {
		t.Fatalf("a wrong key: %d %s", status, raw)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	part, _ := mw.CreateFormFile("file", "scan.pdf")
	_, _ = part.Write([]byte("%PDF-1.4 scan"))
	_ = mw.Close()
	status, raw := graph(http.MethodPost, "/v21.0/"+testAccount+"/media", mw.FormDataContentType(), buf.String(), "key")
	var up struct{ ID string }
	if _ = json.Unmarshal([]byte(raw), &up); status != http.StatusOK || up.ID == "" {
		t.Fatalf("upload: %d %s", status, raw)
	}
	status, raw = graph(http.MethodPost, "/v21.0/"+testAccount+"/messages", "application/json",
		`{"messaging_product":"whatsapp","to":"4915100000002","type":"document","document":{"id":"`+up.ID+`","filename":"invoice.pdf"}}`, "key")
	var sent sentAnswer
	if _ = json.Unmarshal([]byte(raw), &sent); status != http.StatusOK || len(sent.Messages) != 1 {
		t.Fatalf("send: %d %s", status, raw)
	}
	status, raw = graph(http.MethodPost, "/v21.0/"+testAccount+"/messages", "application/json",
		`{"messaging_product":"whatsapp","to":"4915100000002","type":"reaction","reaction":{"message_id":"wamid.`+sent.Messages[0].ID+`","emoji":"👍"}}`, "key")
	if status != http.StatusOK || !strings.Contains(raw, `"messages":[{"id":"`) {
		t.Fatalf("reaction: %d %s", status, raw)
	}
	read := func(id string) (int, string) {
		return graph(http.MethodPost, "/v21.0/"+testAccount+"/messages", "application/json",
			`{"messaging_product":"whatsapp","status":"read","message_id":"`+id+`"}`, "key")
	}
	if status, raw = read("wamid.3A0RECEIVED"); status != http.StatusOK || chats.marked() != "4915100000003 3A0RECEIVED" {
		t.Fatalf("read mark: %d %s, marked %q", status, raw, chats.marked())
	}
	for _, id := range []string{"3A0UNKNOWN", "a.b"} {
		if status, raw = read(id); status != http.StatusBadRequest || !strings.Contains(raw, `"error_subcode":33`) {
			t.Errorf("read mark of %s: %d %s", id, status, raw)
		}
	}
	if status, raw = graph(http.MethodDelete, "/v21.0/"+up.ID, "", "", "key"); status != http.StatusOK {
		t.Fatalf("delete: %d %s", status, raw)
	}
	if status, raw = graph(http.MethodDelete, "/v21.0/"+up.ID, "", "", "key"); status != http.StatusBadRequest || !strings.Contains(raw, `"error_subcode":33`) {
		t.Fatalf("delete again: %d %s", status, raw)
	}
	out := sender.sent()
	if len(out) != 2 || out[0].FileName != "invoice.pdf" || out[1].Type != bridge.TypeReaction || out[1].TargetID != sent.Messages[0].ID {
		t.Errorf("sent %+v", out)
	}
}

// sessionPort is the queue's Sender: always ready, it records what it
// sends.
type sessionPort struct {
	mu  sync.Mutex
	out []bridge.Outgoing
	ids int
}

func (s *sessionPort) Send(_ context.Context, o bridge.Outgoing) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out = append(s.out, o)
	return nil
}

func (s *sessionPort) NewMessageID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("3EB0%012X", s.ids)
}

func (s *sessionPort) Ready() bool { return true }

func (s *sessionPort) sent() []bridge.Outgoing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bridge.Outgoing(nil), s.out...)
}

// receivedOne is the incoming history with one received message, in a 1:1
// chat.
type receivedOne struct {
	id   string
	chat bridge.Recipient
}

func (h receivedOne) Received(_ context.Context, id string) (chat, sender bridge.Recipient, found bool, err error) {
	return h.chat, h.chat, id == h.id, nil
}

// readMarks is the session's read marks, recording the last.
type readMarks struct {
	mu   sync.Mutex
	last string
}

func (c *readMarks) MarkRead(_ context.Context, chat, sender bridge.Recipient, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = chat.String() + sender.String() + " " + id
	return nil
}

func (c *readMarks) marked() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}
