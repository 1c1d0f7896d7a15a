package sendqueue

import (
	"context"
	"errors"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// The same request with the same key sends once; the repeat answers from
// the first request's messages until its response is stored, then with
// that response.
func TestIdempotentRepeat(t *testing.T) {
	f := newFixture(t, time.Hour)
	ctx := context.Background()
	spool := t.TempDir()
	req := func() Request {
		r := textRequest("hello")
		r.Items = append(r.Items, Item{Type: bridge.TypeDocument, File: spooled(t, spool, "a.pdf", "%PDF one")})
		r.IdempotencyKey = "order-42"
		return r
	}
	first := f.submit(req())
	repeat := req()
	again := f.submit(repeat)
	if !again.Replay || again.Stored != nil || len(again.Messages) != 2 ||
		again.Messages[0].ID != first.Messages[0].ID || again.Messages[1].Status != bridge.StatusSent {
		t.Fatalf("repeat %+v, first %+v", again, first)
	}
	if _, err := os.Stat(repeat.Items[1].File.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the repeat's upload left in the spool: %v", err)
	}
	stored := OutcomeOf(first)
	if err := f.q.StoreOutcome(ctx, "order-42", stored); err != nil {
		t.Fatal(err)
	}
	third := f.submit(req())
	if !third.Replay || third.Stored == nil || !reflect.DeepEqual(third.Stored.Messages, stored.Messages) {
		t.Fatalf("third %+v", third)
	}
	if n := len(f.sender.calls()); n != 2 {
		t.Errorf("%d sends, want the first request's 2", n)
	}
}

// The key reused with another request is refused: answering with the first
// response would silently drop the second request.
func TestIdempotencyKeyReusedForAnotherRequest(t *testing.T) {
	f := newFixture(t, time.Hour)
	spool := t.TempDir()
	withDoc := func(name, content string) Request {
		r := textRequest("hello")
		r.Items = append(r.Items, Item{Type: bridge.TypeDocument, File: spooled(t, spool, name, content)})
		return r
	}
	first := withDoc("a.pdf", "%PDF one")
	first.IdempotencyKey = "k"
	f.submit(first)

	bob := withDoc("a.pdf", "%PDF one")
	bob.Recipient = bridge.PhoneRecipient("4915187654321")
	otherText := withDoc("a.pdf", "%PDF one")
	otherText.Items[0].Text = "hello!"
	otherType := withDoc("a.pdf", "%PDF one")
	otherType.Items[1].Type = bridge.TypeImage
	otherFile := withDoc("a.pdf", "%PDF two")
	otherName := withDoc("b.pdf", "%PDF one")
	hashedByHTTP := withDoc("a.pdf", "%PDF one")
	hashedByHTTP.Items[1].File.SHA256 = "0000"
	fewer := textRequest("hello")
	for name, req := range map[string]Request{
		"recipient": bob, "text": otherText, "type": otherType, "file content": otherFile,
		"file name": otherName, "file hash from the HTTP layer": hashedByHTTP, "items": fewer,
	} {
		req.IdempotencyKey = "k"
		_, err := f.q.Submit(context.Background(), req)
		if err == nil {
			t.Errorf("other %s: accepted", name)
			continue
		}
		wantError(t, err, bridge.KindConflict, "idempotency_key_reused")
	}
	if n := f.count(`SELECT count(*) FROM messages`); n != 2 {
		t.Errorf("%d messages stored, want the first request's 2", n)
	}
	if n := len(f.sender.calls()); n != 2 {
		t.Errorf("%d sends", n)
	}
}

// A key past the window is taken over by whatever request comes with it.
func TestIdempotencyWindow(t *testing.T) {
	var (
		mu    sync.Mutex
		clock = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	)
	f := newFixture(t)
	f.close()
	f.open(func(o *MessageLogOptions, _ *Options) {
		o.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	})
	req := textRequest("hello")
	req.IdempotencyKey = "k"
	f.submit(req)
	mu.Lock()
	clock = clock.Add(IdempotencyWindow)
	mu.Unlock()
	other := textRequest("another day")
	other.IdempotencyKey = "k"
	if res := f.submit(other); res.Replay || res.Messages[0].Status != bridge.StatusSent {
		t.Fatalf("after the window: %+v", res)
	}
	if n := len(f.sender.calls()); n != 2 {
		t.Errorf("%d sends", n)
	}
}

// A key stored before requests were hashed cannot be compared: it replays,
// as it did, until its window ends.
func TestIdempotencyKeyFromBeforeHashes(t *testing.T) {
	f := newFixture(t)
	first := f.submit(textRequest("hello")).Messages[0]
	_, err := f.db.Exec(`INSERT INTO idempotency_keys (key, request_id, created_at)
		SELECT 'old', request_id, created_at FROM messages WHERE id = ?`, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	req := textRequest("anything")
	req.IdempotencyKey = "old"
	if res := f.submit(req); !res.Replay || len(res.Messages) != 1 || res.Messages[0].ID != first.ID {
		t.Fatalf("%+v", res)
	}
}

// requestHash tells apart requests whose fields only move a boundary.
func TestRequestHashFieldsAreDelimited(t *testing.T) {
	a := Request{Recipient: alice, Items: []Item{{Type: bridge.TypeText, Text: "ab"}, {Type: bridge.TypeText, Text: "c"}}}
	b := Request{Recipient: alice, Items: []Item{{Type: bridge.TypeText, Text: "a"}, {Type: bridge.TypeText, Text: "bc"}}}
	ha, errA := requestHash(a)
	hb, errB := requestHash(b)
	if errA != nil || errB != nil || ha == hb {
		t.Errorf("%s %s %v %v", ha, hb, errA, errB)
	}
}

// A key answered before outcomes were kept holds the JSON door's HTTP
// answer (its status and body): its repeat replays it as an outcome, so
// that every door renders it, without a migration of the key table.
func TestKeyAnsweredBeforeOutcomesReplaysAsOutcome(t *testing.T) {
	f := newFixture(t, time.Hour)
	req := textRequest("hello")
	req.IdempotencyKey = "before-outcomes"
	first := f.submit(req)
	body := `{"messages":[{"id":"` + first.Messages[0].ID + `","whatsapp_id":"3EB0OLD","type":"text","status":"Queued",` +
		`"retry_count":1,"queue_position":2,"scheduled_at":"2026-11-21T10:00:00.000Z"}]}` + "\n"
	if _, err := f.db.Exec(`UPDATE idempotency_keys SET status = 202, response = ? WHERE key = ?`, []byte(body), req.IdempotencyKey); err != nil {
		t.Fatal(err)
	}
	again := f.submit(req)
	want := OutcomeItem{ID: first.Messages[0].ID, WhatsAppID: "3EB0OLD", Type: bridge.TypeText, Status: bridge.StatusQueued,
		RetryCount: 1, QueuePosition: 2, ScheduledAt: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	if !again.Replay || again.Stored == nil || len(again.Stored.Messages) != 1 || !again.Stored.Messages[0].ScheduledAt.Equal(want.ScheduledAt) {
		t.Fatalf("replay %+v", again)
	}
	got := again.Stored.Messages[0]
	got.ScheduledAt = want.ScheduledAt
	if got != want {
		t.Errorf("replayed %+v, want %+v", got, want)
	}
}
