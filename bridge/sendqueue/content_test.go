package sendqueue

import (
	"context"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// ListSaid returns what each message said, the attachment's name kept after
// its file is gone, a reply's quote and an action's target and emoji; its
// pages are List's.
func TestListSaidShowsWhatWasSaid(t *testing.T) {
	f := newFixture(t, time.Hour)
	text := f.submit(textRequest("hello Ana")).Messages[0]
	doc := f.submit(Request{Recipient: alice, Items: []Item{{Type: bridge.TypeDocument, Text: "the offer",
		ReplyTo: text.WhatsAppID, File: spooled(t, t.TempDir(), "offer.pdf", "%PDF")}}}).Messages[0]
	f.submit(Request{Recipient: alice, Items: []Item{{Type: bridge.TypeReaction,
		Action: &Action{TargetID: text.WhatsAppID, Emoji: "👍"}}}})
	said, next, err := f.q.ListSaid(context.Background(), Filter{Chat: alice, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(said) != 2 || next == "" {
		t.Fatalf("first page: %d messages, next %q", len(said), next)
	}
	if r := said[0]; r.Type != bridge.TypeReaction || r.TargetID != text.WhatsAppID || r.Emoji != "👍" {
		t.Errorf("reaction %+v", r)
	}
	if d := said[1]; d.ID != doc.ID || d.Text != "the offer" || d.FileName != "offer.pdf" || d.MimeType != "application/pdf" ||
		d.ReplyTo != text.WhatsAppID {
		t.Errorf("document %+v", d)
	}
	rest, next, err := f.q.ListSaid(context.Background(), Filter{Chat: alice, Limit: 2, Cursor: next})
	if err != nil || next != "" || len(rest) != 1 || rest[0].Text != "hello Ana" || rest[0].ID != text.ID {
		t.Errorf("second page: %+v, next %q, %v", rest, next, err)
	}
}
