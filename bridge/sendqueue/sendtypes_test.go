package sendqueue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// contentRequest has one item of every content type with every extra.
func contentRequest(t *testing.T) Request {
	t.Helper()
	dir := t.TempDir()
	mentions := []bridge.Recipient{bridge.PhoneRecipient("4915100000003"), {Kind: bridge.RecipientLID, ID: "123456789"}}
	return Request{Recipient: alice, Items: []Item{
		{Type: bridge.TypeText, Text: "hi @4915100000003", ReplyTo: "3EB0AAAA", Mentions: mentions},
		{Type: bridge.TypeVideo, Text: "clip", File: spooled(t, dir, "a.mp4", "video")},
		{Type: bridge.TypeAudio, PTT: true, File: spooled(t, dir, "a.ogg", "voice")},
		{Type: bridge.TypeLocation, Location: &bridge.Location{Latitude: -33.8568, Longitude: 151.2153, Name: "Opera", Address: "Sydney"}},
		{Type: bridge.TypeContact, Contact: &bridge.ContactCard{DisplayName: "Bob", VCard: "BEGIN:VCARD\nVERSION:3.0\nFN:Bob\nEND:VCARD"}},
	}}
}

// What a message carries besides its text is stored with it and sent as
// it was accepted, also after a restart.
func TestContentSurvivesTheStore(t *testing.T) {
	f := newFixture(t, 50*time.Millisecond)
	f.sender.setReady(false)
	req := contentRequest(t)
	res := f.submit(req)
	f.close()
	f.open(nil)
	f.sender.setReady(true)
	f.run()
	for _, m := range res.Messages {
		f.waitStatus(m.ID, bridge.StatusSent)
	}
	calls := f.sender.calls()
	sent := calls[len(calls)-len(req.Items):]
	for i, it := range req.Items {
		out := sent[i].out
		if out.Type != it.Type || out.Text != it.Text || out.ReplyTo != it.ReplyTo || out.PTT != it.PTT ||
			!reflect.DeepEqual(out.Mentions, it.Mentions) || !reflect.DeepEqual(out.Location, it.Location) ||
			!reflect.DeepEqual(out.Contact, it.Contact) {
			t.Errorf("item %d sent as %+v, accepted as %+v", i, out, it)
		}
	}
}

// The idempotency hash covers every extra: the same key with any of them
// changed is another request.
func TestIdempotencyCoversContent(t *testing.T) {
	base := contentRequest(t)
	first, err := requestHash(base)
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]func(r *Request){
		"reply_to": func(r *Request) { r.Items[0].ReplyTo = "3EB0BBBB" },
		"mention":  func(r *Request) { r.Items[0].Mentions = r.Items[0].Mentions[:1] },
		"ptt":      func(r *Request) { r.Items[2].PTT = false },
		"latitude": func(r *Request) { l := *r.Items[3].Location; l.Latitude = 1; r.Items[3].Location = &l },
		"address":  func(r *Request) { l := *r.Items[3].Location; l.Address = "x"; r.Items[3].Location = &l },
		"vcard": func(r *Request) {
			c := *r.Items[4].Contact
			c.VCard += " "
			r.Items[4].Contact = &c
		},
	}
	for name, change := range changes {
		req := base
		req.Items = append([]Item(nil), base.Items...)
		change(&req)
		if h, err := requestHash(req); err != nil || h == first {
			t.Errorf("%s changed but the hash did not (%v)", name, err)
		}
	}
	// A text without extras hashes as it did before they existed, so a
	// key stored then still matches its request.
	h := sha256.New()
	for _, s := range []string{alice.JID(), "text", "hi", "", ""} {
		field(h, s)
	}
	if plain, _ := requestHash(textRequest("hi")); plain != hex.EncodeToString(h.Sum(nil)) {
		t.Errorf("a plain text hashes %s, not as before", plain)
	}
}

func TestUploadsAreSentTwiceThenExpire(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ups := spool.NewUploads(spool.UploadOptions{DB: f.db, Batcher: f.writer, Dir: dir, Now: func() time.Time { return now }, Log: logr.Discard()})
	ctx := context.Background()
	up, err := ups.Add(ctx, spooled(t, dir, "report.pdf", "%PDF-1.7 report"))
	if err != nil {
		t.Fatal(err)
	}
	if up.SHA256 == "" || up.Size != 15 || !up.ExpiresAt.Equal(now.Add(spool.UploadTTL)) {
		t.Errorf("upload %+v", up)
	}
	var copies []string
	for range 2 {
		file, err := ups.Use(ctx, up.ID)
		if err != nil {
			t.Fatal(err)
		}
		copies = append(copies, file.Path)
		f.submit(Request{Recipient: alice, Items: []Item{{Type: bridge.TypeDocument, File: file}}})
	}
	if sent := f.sender.calls(); len(sent) != 2 || sent[0].out.FilePath == sent[1].out.FilePath {
		t.Fatalf("sends %+v", sent)
	}
	for _, p := range copies {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a sent copy stays: %v", err)
		}
	}
	if err := f.q.SweepSpool(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if kept, err := ups.Use(ctx, up.ID); err != nil {
		t.Fatalf("the upload did not survive the start-up sweep: %v", err)
	} else {
		_ = os.Remove(kept.Path)
	}

	now = now.Add(spool.UploadTTL - time.Millisecond)
	if n, err := ups.Expire(ctx); n != 0 || err != nil {
		t.Fatalf("expired %d before its time: %v", n, err)
	}
	now = now.Add(time.Millisecond)
	if n, err := ups.Expire(ctx); n != 1 || err != nil {
		t.Fatalf("expired %d at its time: %v", n, err)
	}
	_, err = ups.Use(ctx, up.ID)
	wantError(t, err, bridge.KindInvalid, "unknown_upload")
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left in the spool: %v", left)
	}
}
