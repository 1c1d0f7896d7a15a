package sendqueue

import (
	"context"
	"errors"
	"os"
	"reflect"
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
	d := Draft{To: "4915100000002", Items: []ItemDraft{{Type: "text", Text: "hi"}}, IdempotencyKey: "k1"}
	first, err := s.Send(context.Background(), d)
	if err != nil || first.Replay || len(first.Messages) != 1 {
		t.Fatal(first, err)
	}
	again, err := s.Send(context.Background(), d)
	if err != nil || !again.Replay || !reflect.DeepEqual(again.Messages, first.Messages) {
		t.Fatalf("the repeat answered %+v (%v), the first %+v", again, err, first)
	}
	if n := len(f.sender.calls()); n != 1 {
		t.Errorf("%d sends for one request and its repeat", n)
	}
	d.Items[0].Text = "another"
	if _, err := s.Send(context.Background(), d); bridge.ErrorOf(err).Code != bridge.CodeIdempotencyKeyReused {
		t.Errorf("another request on the key: %v", err)
	}
}

// A refused draft leaves nothing in the spool and nothing in the queue.
func TestSendingRefusals(t *testing.T) {
	f := newFixture(t)
	s := Sending{Queue: f.q, Log: logr.Discard()}
	file := spooled(t, t.TempDir(), "a.pdf", "%PDF-1.4")
	bad := Draft{To: "12ab", Items: []ItemDraft{{Type: "document", File: file}}}
	if _, err := s.Send(context.Background(), bad); bridge.ErrorOf(err).Code != bridge.CodeInvalidNumber {
		t.Fatalf("a bad number: %v", err)
	}
	if _, err := os.Stat(file.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused draft's file is still spooled: %v", err)
	}
	if n := f.count(`SELECT count(*) FROM messages`); n != 0 {
		t.Errorf("%d messages of a refused draft", n)
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
