package sendqueue

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// queryPlan is SQLite's plan of query, one detail per line.
func queryPlan(t testing.TB, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// GET /api/messages?chat= reads the chat's rows through messages_recipient
// in the list's order: no scan of the log, no sort, with or without the
// other filters and a cursor.
func TestChatListUsesItsIndex(t *testing.T) {
	db := testutil.OpenBridgeDB(t)
	chat := bridge.PhoneRecipient("4915112345678")
	cursor := bridge.EncodeCursor(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC).UnixMilli(), "msg_x")
	for name, f := range map[string]Filter{
		"chat":               {Chat: chat, Limit: 50},
		"chat, next page":    {Chat: chat, Limit: 50, Cursor: cursor},
		"chat, since":        {Chat: chat, Limit: 50, Since: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		"chat, status, page": {Chat: chat, Status: bridge.StatusDelivered, Limit: 50, Cursor: cursor},
	} {
		query, args, err := listQuery(f)
		if err != nil {
			t.Fatal(err)
		}
		plan := queryPlan(t, db, query, args...)
		if !strings.Contains(plan, "INDEX messages_recipient (recipient=?") || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("%s: the plan does not read the chat through messages_recipient in order:\n%s", name, plan)
		}
	}
}

// fillLog inserts n finished texts spread over chats chats, the newest
// last, in one transaction: a log as a busy account's looks after weeks.
func fillLog(tb testing.TB, db *sql.DB, n, chats int) {
	tb.Helper()
	tx, err := db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	stmt, err := tx.Prepare(`INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, body, status,
		created_at, updated_at) VALUES (?, ?, ?, 0, ?, 'text', 'hello', 'Delivered', ?, ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i := range n {
		chat := bridge.PhoneRecipient(fmt.Sprintf("49151%08d", i%chats)).JID()
		at := start + int64(i)*1000
		if _, err := stmt.Exec(fmt.Sprintf("msg_%08d", i), fmt.Sprintf("WA%08d", i), fmt.Sprintf("req_%08d", i), chat, at, at); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkListChat: the first page (50) of one chat's messages in a log of
// 100,000 over 500 chats, through messages_recipient and, the baseline in
// the same run on the same file, with that index dropped.
//
//	go test -run=NONE -bench=ListChat ./bridge/sendqueue
func BenchmarkListChat(b *testing.B) {
	db := testutil.OpenBridgeDB(b)
	writer := sqlite.NewBatcher(db)
	b.Cleanup(writer.Close)
	fillLog(b, db, 100_000, 500)
	l := NewMessageLog(MessageLogOptions{DB: db, Batcher: writer, Log: logr.Discard()})
	list := func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			page, _, err := l.List(context.Background(), Filter{Chat: bridge.PhoneRecipient(fmt.Sprintf("49151%08d", i%500)), Limit: 50})
			if err != nil || len(page) != 50 {
				b.Fatalf("%d messages, %v", len(page), err)
			}
		}
	}
	b.Run("index", list)
	if _, err := db.Exec(`DROP INDEX messages_recipient`); err != nil {
		b.Fatal(err)
	}
	b.Run("no index", list)
}
