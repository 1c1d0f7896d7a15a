package sendqueue

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
)

// The send use case end to end on a real queue: a draft is validated once
// and queued, the door's answer is stored under the key, a repeat of the
// key gets that very answer without sending again, and another request on
// the key is a conflict.
func TestSendingIsIdempotentEndToEnd(t *testing.T) {
	f := newFixture(t)
	s := Sending{Queue: f.q, Log: logr.Discard()}
	renders := 0
	render := func(res Result) (StoredResponse, error) {
		renders++
		return StoredResponse{Status: 200 + renders, Body: []byte(res.Messages[0].ID)}, nil
	}
	d := Draft{To: "4915100000002", Items: []ItemDraft{{Type: "text", Text: "hi"}}, IdempotencyKey: "k1"}
	first, err := s.Send(context.Background(), d, render)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Send(context.Background(), d, render)
	if err != nil || again.Status != first.Status || string(again.Body) != string(first.Body) || renders != 1 {
		t.Fatalf("the repeat answered %d %s (%v) after %d renders, the first %d %s", again.Status, again.Body, err, renders, first.Status, first.Body)
	}
	if n := len(f.sender.calls()); n != 1 {
		t.Errorf("%d sends for one request and its repeat", n)
	}
	d.Items[0].Text = "another"
	if _, err := s.Send(context.Background(), d, render); bridge.ErrorOf(err).Code != bridge.CodeIdempotencyKeyReused {
		t.Errorf("another request on the key: %v", err)
	}
}

// A refused draft leaves nothing in the spool and nothing in the queue; a
// render that fails stores no answer for the key.
func TestSendingRefusals(t *testing.T) {
	f := newFixture(t)
	s := Sending{Queue: f.q, Log: logr.Discard()}
	file := spooled(t, t.TempDir(), "a.pdf", "%PDF-1.4")
	bad := Draft{To: "12ab", Items: []ItemDraft{{Type: "document", File: file}}}
	if _, err := s.Send(context.Background(), bad, nil); bridge.ErrorOf(err).Code != bridge.CodeInvalidNumber {
		t.Fatalf("a bad number: %v", err)
	}
	if _, err := os.Stat(file.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused draft's file is still spooled: %v", err)
	}
	broken := errors.New("render failed")
	d := Draft{To: "4915100000002", Items: []ItemDraft{{Type: "text", Text: "hi"}}, IdempotencyKey: "k2"}
	if _, err := s.Send(context.Background(), d, func(Result) (StoredResponse, error) { return StoredResponse{}, broken }); !errors.Is(err, broken) {
		t.Fatalf("render's error: %v", err)
	}
	if n := f.count(`SELECT count(*) FROM idempotency_keys WHERE key = 'k2' AND status != 0`); n != 0 {
		t.Errorf("%d answers stored after a failed render", n)
	}
	if n := f.count(`SELECT count(*) FROM messages`); n != 1 {
		t.Errorf("%d messages, want the valid one only", n)
	}
}

// FuzzParseIdempotencyKey: a key is accepted exactly when it is at most 255
// printable ASCII characters, and returned unchanged.
func FuzzParseIdempotencyKey(f *testing.F) {
	for _, k := range []string{"", "k1", "has space", "naïve", "\x00", string(make([]byte, 256))} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, k string) {
		got, err := ParseIdempotencyKey(k)
		printable := len(k) <= 255
		for _, r := range k {
			printable = printable && r >= '!' && r <= '~'
		}
		if (err == nil) != printable || err == nil && got != k {
			t.Fatalf("%s: %q %v", strconv.Quote(k), got, err)
		}
		if err != nil && bridge.ErrorOf(err).Code != bridge.CodeInvalidIdempotencyKey {
			t.Fatalf("error %v", err)
		}
	})
}
