package history_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/history"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

const alice = "4915112345678"

// received stores what a contact sent as the incoming history stores it.
func received(t *testing.T, db *sql.DB, id int, chat, sender, name, body string, at int64) {
	t.Helper()
	payload := fmt.Sprintf(`{"event":"message.upsert","media":{"id":"med-%d","mimetype":"image/jpeg"}}`, id)
	if body != "" {
		payload = `{"event":"message.upsert"}`
	}
	if _, err := db.Exec(`INSERT INTO inbox (id, webhook_id, event, ordering_key, whatsapp_id, chat, sender, push_name, type,
		body, sent_at, received_at, payload) VALUES (?, ?, 'message.upsert', 'k', ?, ?, ?, ?, 'text', ?, ?, ?, ?)`,
		id, fmt.Sprint("wh", id), fmt.Sprint("IN", id), chat, sender, name, body, at, at, payload); err != nil {
		t.Fatal(err)
	}
}

// sent stores what the account sent as the message log stores it.
func sent(t *testing.T, db *sql.DB, id, jid, body string, at int64) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, body,
		status, created_at, updated_at) VALUES (?, ?, 'req', 0, ?, 'text', ?, 'Sent', ?, ?)`,
		id, "OUT"+id, jid, body, at, at); err != nil {
		t.Fatal(err)
	}
}

func ids(msgs []history.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Direction)+":"+m.ID)
	}
	return strings.Join(out, " ")
}

// One chat's history interleaves both ways newest first, and its pages
// follow each other without a gap or a repeat, rows of one millisecond too.
func TestMessagesBothWaysInPages(t *testing.T) {
	db := testutil.OpenBridgeDB(t)
	received(t, db, 1, alice, alice, "Alice", "hello", 1000)
	sent(t, db, "m1", alice+"@s.whatsapp.net", "hi Alice", 2000)
	received(t, db, 2, alice, alice, "Alice", "", 2000)
	received(t, db, 3, alice, alice, "Alice", "how are you", 3000)
	received(t, db, 4, "4915199999999", "4915199999999", "Bob", "other chat", 4000)
	s := &history.Store{DB: db}
	chat := bridge.PhoneRecipient(alice)

	var all []history.Message
	cursor := ""
	for range 5 {
		page, next, err := s.Messages(context.Background(), chat, 2, cursor)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if cursor = next; cursor == "" {
			break
		}
	}
	if got, want := ids(all), "in:IN3 out:OUTm1 in:IN2 in:IN1"; got != want {
		t.Fatalf("pages: %s, want %s", got, want)
	}
	if m := all[2]; m.MediaID != "med-2" || m.MimeType != "image/jpeg" || m.Chat != alice || m.Sender != alice || m.SenderName != "Alice" {
		t.Fatalf("received attachment: %+v", m)
	}
	if m := all[1]; m.LogID != "m1" || m.Status != "Sent" || m.Chat != alice {
		t.Fatalf("sent message: %+v", m)
	}
	if _, _, err := s.Messages(context.Background(), chat, 2, "bogus"); bridge.ErrorKind(err) != bridge.KindInvalid {
		t.Fatalf("a cursor it never gave: %v", err)
	}
}

// The overview counts what arrived since the account last read or wrote
// in a chat, names the contact, and shows the last message either way.
func TestChatsCountUnreadSinceReadOrReply(t *testing.T) {
	db := testutil.OpenBridgeDB(t)
	now := time.UnixMilli(10_000)
	s := &history.Store{DB: db, Now: func() time.Time { return now }}
	received(t, db, 1, alice, alice, "Alice", "one", 1000)
	sent(t, db, "m1", alice+"@s.whatsapp.net", "answer", 2000)
	received(t, db, 2, alice, alice, "Alice A.", "two", 3000)
	received(t, db, 3, alice, alice, "Alice A.", "three", 4000)
	received(t, db, 4, "123@g.us", alice, "Alice A.", "in a group", 5000)
	received(t, db, 5, bridge.StatusJID, alice, "Alice A.", "a status", 6000)

	chats, err := s.Chats(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(chats) != 2 {
		t.Fatalf("chats: %+v (the status broadcast is no chat)", chats)
	}
	if g := chats[0]; g.Chat != "123@g.us" || g.Name != "" || g.Unread != 1 {
		t.Fatalf("group first: %+v", g)
	}
	if c := chats[1]; c.Chat != alice || c.Name != "Alice A." || c.Unread != 2 || c.Last.Text != "three" {
		t.Fatalf("alice: %+v", c)
	}
	if err := s.MarkRead(context.Background(), bridge.PhoneRecipient(alice)); err != nil {
		t.Fatal(err)
	}
	if chats, err = s.Chats(context.Background(), 1); err != nil || len(chats) != 1 {
		t.Fatalf("limit 1: %v %+v", err, chats)
	}
	if chats, _ = s.Chats(context.Background(), 10); chats[1].Unread != 0 {
		t.Fatalf("after the read mark: %+v", chats[1])
	}
}

// Search finds both ways, newest first, every word with the last as a
// prefix, within one chat when asked; typed syntax is words, not FTS5.
func TestSearchBothWays(t *testing.T) {
	db := testutil.OpenBridgeDB(t)
	s := &history.Store{DB: db}
	received(t, db, 1, alice, alice, "Alice", "Where is the invoice?", 1000)
	sent(t, db, "m1", alice+"@s.whatsapp.net", "The invoice is attached", 2000)
	received(t, db, 2, "4915199999999", "4915199999999", "Bob", "invoices AND NEAR(x) \"quoted", 3000)
	ctx := context.Background()

	got, err := s.Search(ctx, "invoice", bridge.Recipient{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if ids(got) != "in:IN2 out:OUTm1 in:IN1" {
		t.Fatalf("invoice*: %s", ids(got))
	}
	if got, _ = s.Search(ctx, "the invoice", bridge.PhoneRecipient(alice), 1); ids(got) != "out:OUTm1" {
		t.Fatalf("in alice's chat, limit 1: %s", ids(got))
	}
	if got, err = s.Search(ctx, `NEAR( "quoted`, bridge.Recipient{}, 10); err != nil || ids(got) != "in:IN2" {
		t.Fatalf("syntax as words: %s %v", ids(got), err)
	}
	for _, bad := range []string{"", "  ?! ", strings.Repeat("a", history.MaxQueryBytes+1), "\xff"} {
		if _, err := s.Search(ctx, bad, bridge.Recipient{}, 10); bridge.ErrorOf(err).Code != bridge.CodeInvalidSearch {
			t.Fatalf("query %q: %v", bad, err)
		}
	}
}

// Any input is a valid FTS5 query or invalid_search, never an SQL error.
func FuzzMatchExpression(f *testing.F) {
	db := testutil.OpenBridgeDB(f)
	for _, seed := range []string{"invoice", `a "b`, "NEAR(a b)", "body:x", "x*", "-", "ü ß 日本", "a OR b AND NOT c", "^x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		expr, err := history.MatchExpression(query)
		if err != nil {
			if bridge.ErrorOf(err).Code != bridge.CodeInvalidSearch {
				t.Fatalf("%q: %v", query, err)
			}
			return
		}
		if _, err := db.Exec(`SELECT rowid FROM inbox_search WHERE inbox_search MATCH ?`, expr); err != nil {
			t.Fatalf("%q became %q, which FTS5 refuses: %v", query, expr, err)
		}
	})
}
