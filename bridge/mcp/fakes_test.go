package mcp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/history"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// fakeHistory is a history of fixed messages.
type fakeHistory struct {
	mu      sync.Mutex
	msgs    []history.Message
	marked  []string
	media   map[string]string // media id -> chat
	queries []string
}

func (h *fakeHistory) Chats(_ context.Context, limit int) ([]history.Chat, error) {
	var out []history.Chat
	seen := map[string]bool{}
	for _, m := range h.msgs {
		if !seen[m.Chat] && len(out) < limit {
			seen[m.Chat] = true
			out = append(out, history.Chat{Chat: m.Chat, Name: m.SenderName, Unread: 1, Last: m})
		}
	}
	return out, nil
}

func (h *fakeHistory) Messages(_ context.Context, chat bridge.Recipient, limit int, _ string) ([]history.Message, string, error) {
	var out []history.Message
	for _, m := range h.msgs {
		if m.Chat == chat.String() && len(out) < limit {
			out = append(out, m)
		}
	}
	return out, "", nil
}

func (h *fakeHistory) Search(_ context.Context, query string, _ bridge.Recipient, limit int) ([]history.Message, error) {
	h.mu.Lock()
	h.queries = append(h.queries, query)
	h.mu.Unlock()
	var out []history.Message
	for _, m := range h.msgs {
		if strings.Contains(m.Text, query) && len(out) < limit {
			out = append(out, m)
		}
	}
	return out, nil
}

func (h *fakeHistory) ReceivedIn(_ context.Context, chat bridge.Recipient, id string) (string, bool, error) {
	for _, m := range h.msgs {
		if m.Direction == history.In && m.Chat == chat.String() && m.ID == id {
			return m.Sender, true, nil
		}
	}
	return "", false, nil
}

func (h *fakeHistory) MediaChat(_ context.Context, id string) (string, bool, error) {
	chat, ok := h.media[id]
	return chat, ok, nil
}

func (h *fakeHistory) MarkRead(_ context.Context, chat bridge.Recipient) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.marked = append(h.marked, chat.String())
	return nil
}

// fakeSending is the send use case's contract: a key seen before answers
// its first outcome, and only a new key queues a message.
type fakeSending struct {
	mu       sync.Mutex
	outcomes map[string]sendqueue.Outcome
	queued   []sendqueue.Request
	// by are the names of the callers the sends came from (the context's).
	by []string
}

func (s *fakeSending) callers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.by...)
}

func (s *fakeSending) Send(ctx context.Context, d sendqueue.Draft) (sendqueue.Outcome, error) {
	req, err := d.Validate()
	if err != nil {
		return sendqueue.Outcome{}, err
	}
	return s.Submit(ctx, req)
}

func (s *fakeSending) Submit(ctx context.Context, req sendqueue.Request) (sendqueue.Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.by = append(s.by, bridge.CallerOf(ctx).Name)
	if o, ok := s.outcomes[req.IdempotencyKey]; ok && req.IdempotencyKey != "" {
		o.Replay = true
		return o, nil
	}
	s.queued = append(s.queued, req)
	n := len(s.queued)
	o := sendqueue.OutcomeOf(sendqueue.Result{Messages: []bridge.Message{{ID: fmt.Sprint("log-", n), WhatsAppID: fmt.Sprint("WA", n),
		Recipient: req.Recipient, Type: req.Items[0].Type, Status: bridge.StatusQueued, CreatedAt: time.Now()}}})
	if s.outcomes == nil {
		s.outcomes = map[string]sendqueue.Outcome{}
	}
	s.outcomes[req.IdempotencyKey] = o
	return o, nil
}

func (s *fakeSending) requests() []sendqueue.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sendqueue.Request(nil), s.queued...)
}

type fakeOwn map[string]bridge.Message

func (o fakeOwn) FindMessage(_ context.Context, id string) (bridge.Message, error) {
	if m, ok := o[id]; ok {
		return m, nil
	}
	return bridge.Message{}, bridge.Errorf(bridge.KindNotFound, bridge.CodeMessageNotFound, "no such message")
}

type fakeReceipts struct {
	mu   sync.Mutex
	read []string
}

func (r *fakeReceipts) MarkRead(_ context.Context, chat, sender bridge.Recipient, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.read = append(r.read, chat.String()+"/"+sender.String()+"/"+id)
	return nil
}

type fakeMedia map[string]string // id -> content

func (m fakeMedia) Open(_ context.Context, id string) (*bridge.MediaFile, error) {
	c, ok := m[id]
	if !ok {
		return nil, bridge.ErrMediaNotFound
	}
	return &bridge.MediaFile{ID: id, MimeType: "image/png", Content: nopCloser{strings.NewReader(c)}}, nil
}

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }

// fakeFiles spools into a test's directory.
type fakeFiles struct{ dir string }

func (f fakeFiles) Use(context.Context, string) (*sendqueue.SpooledFile, error) {
	return nil, bridge.Errorf(bridge.KindInvalid, bridge.CodeUnknownUpload, "no such upload")
}

func (f fakeFiles) Spool(r io.Reader, name string) (*sendqueue.SpooledFile, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return &sendqueue.SpooledFile{Path: f.dir + "/x", Name: name, MimeType: http.DetectContentType(data), Size: int64(len(data))}, nil
}
