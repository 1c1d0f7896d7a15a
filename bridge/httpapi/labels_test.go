package httpapi

import (
	"github.com/go-logr/logr"

	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/groupadmin"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// fakeLabels is the label book: label 1 exists; changes are counted.
type fakeLabels struct {
	mu      sync.Mutex
	changes []string
}

func (f *fakeLabels) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.changes = append(f.changes, s)
}

func (f *fakeLabels) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.changes)
}

func (f *fakeLabels) Labels(context.Context) ([]bridge.Label, error) {
	return []bridge.Label{{ID: "1", Name: "New customer", Color: 2, Chats: []string{"4915100000002@s.whatsapp.net", "120363000000000001@g.us"}}}, nil
}

func (f *fakeLabels) CreateLabel(_ context.Context, name string, color int) (bridge.Label, error) {
	f.record("create " + name)
	return bridge.Label{ID: "2", Name: name, Color: color}, nil
}

func (f *fakeLabels) UpdateLabel(_ context.Context, id string, name *string, _ *int) (bridge.Label, error) {
	f.record("update " + id)
	if id != "1" {
		return bridge.Label{}, bridge.ErrLabelNotFound
	}
	return bridge.Label{ID: id, Name: *name}, nil
}

func (f *fakeLabels) DeleteLabel(_ context.Context, id string) error {
	f.record("delete " + id)
	return nil
}

func (f *fakeLabels) LabelChat(_ context.Context, id string, chat bridge.Recipient, labeled bool) error {
	f.record("chat " + id + " " + chat.JID())
	return nil
}

func (f *fakeLabels) LabelMessage(_ context.Context, id string, chat bridge.Recipient, msg string, labeled bool) error {
	f.record("message " + id + " " + msg)
	return nil
}

func labelServer(t *testing.T) (*fakeLabels, func(method, path, body string) (int, string)) {
	t.Helper()
	db := testutil.OpenBridgeDB(t)
	writer := sqlite.NewBatcher(db)
	t.Cleanup(writer.Close)
	labels := &fakeLabels{}
	rate := bridge.SendRate{N: 60, Per: time.Minute}
	srv := newTestServer(t, testDeps{Labels: labels, GroupActions: groupadmin.New(sendqueue.NewAnswers(db, writer, time.Now), rate, time.Now, logr.Discard())})
	return labels, func(method, path, body string) (int, string) {
		t.Helper()
		headers := []string{"X-Api-Key: " + testAPIKey}
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
			headers = append(headers, "Content-Type: application/json")
		}
		resp := do(t, method, srv.URL+path, rd, headers...)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
}

// Bad input is refused with its own code before anything reaches WhatsApp;
// good input reaches the book and answers as described.
func TestLabelsInput(t *testing.T) {
	t.Parallel()
	labels, call := labelServer(t)
	for _, c := range []struct{ method, path, body, code string }{
		{"POST", "/api/labels", `{}`, "missing_name"},
		{"POST", "/api/labels", `{"name":"  "}`, "invalid_label_name"},
		{"POST", "/api/labels", `{"name":"a\u0007b"}`, "invalid_label_name"},
		{"POST", "/api/labels", `{"name":"` + strings.Repeat("x", 101) + `"}`, "invalid_label_name"},
		{"POST", "/api/labels", `{"name":"ok","color":20}`, "invalid_label_color"},
		{"POST", "/api/labels", `{"name":"ok","colour":2}`, "invalid_json"},
		{"PATCH", "/api/labels/1", `{}`, "missing_change"},
		{"PATCH", "/api/labels/x1", `{"name":"a"}`, "invalid_label"},
		{"DELETE", "/api/labels/-1", "", "invalid_label"},
		{"PUT", "/api/labels/1/chats/not-a-chat", "", "invalid_chat"},
		{"PUT", "/api/labels/1/chats/4915100000002/messages/bad%20id", "", "invalid_message_id"},
		{"GET", "/api/labels?all=1", "", "invalid_query"},
	} {
		status, body := call(c.method, c.path, c.body)
		if status != http.StatusBadRequest || errorCode(t, body) != c.code {
			t.Errorf("%s %s %s: %d %s, want 400 %s", c.method, c.path, c.body, status, body, c.code)
		}
	}
	if labels.count() != 0 {
		t.Fatalf("bad input reached the book: %v", labels.changes)
	}
	if status, body := call("GET", "/api/labels", ""); status != http.StatusOK || !strings.Contains(body, `"chats":["4915100000002","120363000000000001@g.us"]`) {
		t.Errorf("list: %d %s", status, body)
	}
	if status, body := call("POST", "/api/labels", `{"name":" Paid ","color":5}`); status != http.StatusCreated || !strings.Contains(body, `"name":"Paid"`) {
		t.Errorf("create: %d %s", status, body)
	}
	if status, body := call("PATCH", "/api/labels/9", `{"name":"x"}`); status != http.StatusNotFound || errorCode(t, body) != "label_not_found" {
		t.Errorf("update of an unknown label: %d %s", status, body)
	}
	for _, c := range []struct{ method, path string }{
		{"PUT", "/api/labels/1/chats/4915100000002"}, {"DELETE", "/api/labels/1/chats/120363000000000001@g.us"},
		{"PUT", "/api/labels/1/chats/4915100000002/messages/3EB0AA"}, {"DELETE", "/api/labels/1"},
	} {
		if status, body := call(c.method, c.path, ""); status != http.StatusNoContent {
			t.Errorf("%s %s: %d %s", c.method, c.path, status, body)
		}
	}
}
