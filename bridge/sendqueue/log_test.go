package sendqueue

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Paging walks the whole log, newest first, with no gap or repeat, even
// when messages share a millisecond; a malformed cursor is refused, never
// read as the first page.
func TestList(t *testing.T) {
	f := newFixture(t, time.Hour)
	var ids []string
	for range 2 {
		for _, m := range f.submit(textRequest("a", "b", "c")).Messages {
			ids = append(ids, m.ID)
		}
	}
	f.sender.setReady(false)
	queued := f.submit(textRequest("d")).Messages[0]
	ids = append(ids, queued.ID)

	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		msgs, next, err := f.q.List(context.Background(), Filter{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			seen = append(seen, m.ID)
			if m.Recipient != alice || m.Type != bridge.TypeText {
				t.Errorf("listed %+v", m)
			}
		}
		if next == "" {
			break
		}
		if page > len(ids) {
			t.Fatal("paging does not end")
		}
		cursor = next
	}
	if len(seen) != len(ids) {
		t.Fatalf("listed %d messages, stored %d", len(seen), len(ids))
	}
	for i, id := range seen { // UUIDv7: newest first is descending id
		if want := ids[len(ids)-1-i]; id != want {
			t.Errorf("position %d: %s, want %s", i, id, want)
		}
	}

	msgs, _, err := f.q.List(context.Background(), Filter{Limit: 10, Status: bridge.StatusQueued})
	if err != nil || len(msgs) != 1 || msgs[0].ID != queued.ID {
		t.Errorf("Queued only: %v %v", msgs, err)
	}
	// A chat's messages only.
	bob := bridge.Recipient{Kind: bridge.RecipientGroup, ID: "120363025246125486"}
	toBob := f.submit(Request{Recipient: bob, Items: []Item{{Type: bridge.TypeText, Text: "e"}}}).Messages[0]
	for chat, want := range map[bridge.Recipient]int{alice: len(ids), bob: 1, bridge.PhoneRecipient("4915100000000"): 0} {
		msgs, _, err := f.q.List(context.Background(), Filter{Limit: 10, Chat: chat})
		if err != nil || len(msgs) != want || (chat == bob && msgs[0].ID != toBob.ID) {
			t.Errorf("chat %s: %d messages, want %d (%v)", chat, len(msgs), want, err)
		}
	}
	// The cursor's own cases are bridge.DecodeCursor's tests; List refuses
	// what it refuses.
	for name, bad := range map[string]string{"not base64": "!!", "no colon": base64.RawURLEncoding.EncodeToString([]byte("123"))} {
		msgs, next, err := f.q.List(context.Background(), Filter{Limit: 10, Cursor: bad})
		if err == nil {
			t.Errorf("%s: cursor %q gave %d messages, next %q", name, bad, len(msgs), next)
			continue
		}
		wantError(t, err, bridge.KindInvalid, "invalid_cursor")
	}
	_, _, err = f.q.List(context.Background(), Filter{})
	wantError(t, err, bridge.KindInvalid, "invalid_limit")
}

func TestGet(t *testing.T) {
	f := newFixture(t)
	group := bridge.Recipient{Kind: bridge.RecipientGroup, ID: "120363025246125486"}
	sent := f.submit(Request{Recipient: group, Items: []Item{{Type: bridge.TypeText, Text: "hi"}}}).Messages[0]
	got, err := f.q.Get(context.Background(), sent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Recipient != group || got.WhatsAppID != sent.WhatsAppID || got.Status != bridge.StatusSent || got.Type != bridge.TypeText {
		t.Errorf("Get = %+v, Submit said %+v", got, sent)
	}
	if stored := f.count(`SELECT count(*) FROM messages WHERE recipient = ?`, group.JID()); stored != 1 {
		t.Errorf("the log does not hold the recipient's JID %s", group.JID())
	}
	_, err = f.q.Get(context.Background(), "no-such-id")
	wantError(t, err, bridge.KindNotFound, "not_found")
}

// Receipts move messages forward only, each change inside the transaction
// that stores it; a receipt never fails a message.
func TestReceipts(t *testing.T) {
	f := newFixture(t, time.Hour)
	m := f.submit(textRequest("hello")).Messages[0]
	ctx := context.Background()
	steps := []struct {
		status  bridge.Status
		changed int
		want    bridge.Status
	}{
		{bridge.StatusDelivered, 1, bridge.StatusDelivered},
		{bridge.StatusRead, 1, bridge.StatusRead},
		{bridge.StatusDelivered, 0, bridge.StatusRead}, // late
		{bridge.StatusFailed, 0, bridge.StatusRead},
	}
	for _, s := range steps {
		changed, err := f.q.AdvanceStatus(ctx, []string{m.WhatsAppID, "sent-from-the-phone"}, s.status)
		if err != nil || len(changed) != s.changed {
			t.Fatalf("%s: changed %v, %v", s.status, changed, err)
		}
		if got, _ := f.q.Get(ctx, m.ID); got.Status != s.want {
			t.Fatalf("after %s: %s, want %s", s.status, got.Status, s.want)
		}
	}
	other := f.submit(textRequest("again")).Messages[0]
	if err := f.q.Receipt(ctx, bridge.Receipt{WhatsAppIDs: []string{other.WhatsAppID}, Status: bridge.StatusRead}); err != nil {
		t.Fatal(err)
	}
	f.waitStatus(other.ID, bridge.StatusRead)
	f.sender.setReady(false)
	queued := f.submit(textRequest("waits")).Messages[0]
	if changed, err := f.q.AdvanceStatus(ctx, []string{queued.WhatsAppID}, bridge.StatusFailed); err != nil || len(changed) != 0 {
		t.Errorf("a Failed receipt changed %v, %v", changed, err)
	}
	f.waitStatus(queued.ID, bridge.StatusQueued)
	want := []string{m.WhatsAppID + " Sent", m.WhatsAppID + " Delivered", m.WhatsAppID + " Read", other.WhatsAppID + " Sent",
		other.WhatsAppID + " Delivered", other.WhatsAppID + " Read"} // a Read receipt on a Sent message: it passed Delivered
	if got := f.events.events(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("events %v, want %v", got, want)
	}
}

// A Log alone, with no Sender (the session's receipts target, built before
// the queue), applies receipts, with their events and observations, and
// lists the messages a queue stored.
func TestLogWithoutSender(t *testing.T) {
	f := newFixture(t, time.Hour)
	sent := f.submit(textRequest("hello")).Messages[0]
	f.sender.setReady(false)
	queued := f.submit(textRequest("waits")).Messages[0]
	f.close()

	db, writer := f.openDB()
	events, observed := &txEvents{}, &statuses{}
	log := NewMessageLog(MessageLogOptions{DB: db, Batcher: writer, Outbox: events, Observer: observed})
	ctx := context.Background()
	if n, err := log.Depth(ctx); err != nil || n != 1 {
		t.Fatalf("depth %d, %v; want 1", n, err)
	}
	ids := []string{sent.WhatsAppID, queued.WhatsAppID, "sent-from-the-phone"}
	if err := log.Receipt(ctx, bridge.Receipt{WhatsAppIDs: ids, Status: bridge.StatusDelivered}); err != nil {
		t.Fatal(err)
	}
	msgs, next, err := log.List(ctx, Filter{Limit: 10})
	if err != nil || next != "" || len(msgs) != 2 {
		t.Fatalf("List = %v, %q, %v", msgs, next, err)
	}
	for i, want := range []bridge.Message{queued, sent} { // newest first
		if msgs[i].ID != want.ID || msgs[i].Status != bridge.StatusDelivered {
			t.Errorf("message %d: %s %s, want %s Delivered", i, msgs[i].ID, msgs[i].Status, want.ID)
		}
	}
	if got, err := log.Get(ctx, queued.ID); err != nil || got.Status != bridge.StatusDelivered {
		t.Errorf("Get = %+v, %v", got, err)
	}
	if n, err := log.Depth(ctx); err != nil || n != 0 {
		t.Errorf("depth %d, %v after the receipt; want 0", n, err)
	}
	// The queued one was sent, as its receipt says: Sent, then Delivered.
	want := []string{sent.WhatsAppID + " Delivered", queued.WhatsAppID + " Sent", queued.WhatsAppID + " Delivered"}
	if got := events.events(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("events %v, want %v", got, want)
	}
	if got := observed.reached(); len(got) != 2 || got[0] != bridge.StatusDelivered || got[1] != bridge.StatusDelivered {
		t.Errorf("observed %v, want Delivered twice", got)
	}
	var success int
	if err := db.QueryRow(`SELECT coalesce(sum(success), 0) FROM delivery_daily`).Scan(&success); err != nil || success != 2 {
		t.Errorf("rollup success %d, %v; want 2 (the queued message arrived)", success, err)
	}
}
