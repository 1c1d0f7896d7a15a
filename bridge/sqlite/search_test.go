package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
)

// searchHits is what a full-text query finds in each direction: inbox
// bodies and logged message ids.
func searchHits(t *testing.T, db *sql.DB, query string) (in []string, out []string) {
	t.Helper()
	rows, err := db.Query(`SELECT i.body FROM inbox_search s JOIN inbox i ON i.id = s.rowid WHERE inbox_search MATCH ? ORDER BY i.id`, query)
	if err != nil {
		t.Fatal(err)
	}
	in = scanStrings(t, rows)
	rows, err = db.Query(`SELECT m.id FROM messages_search s JOIN messages_search_ids n ON n.number = s.rowid
		JOIN messages m ON m.id = n.message_id WHERE messages_search MATCH ? ORDER BY m.id`, query)
	if err != nil {
		t.Fatal(err)
	}
	return in, scanStrings(t, rows)
}

func scanStrings(t *testing.T, rows *sql.Rows) []string {
	t.Helper()
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func insertInbox(t *testing.T, db *sql.DB, id int, body string) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO inbox (id, webhook_id, event, ordering_key, whatsapp_id, chat, sender, type, body,
		sent_at, received_at, payload) VALUES (?, ?, 'message.upsert', 'k', ?, '4915112345678', '4915112345678', 'text', ?, 1, 1, '{}')`,
		id, "wh"+body, "WAIN"+body, body); err != nil {
		t.Fatal(err)
	}
}

func insertLogged(t *testing.T, db *sql.DB, id, body string) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, body,
		status, created_at, updated_at) VALUES (?, ?, 'req', 0, '4915112345678', 'text', ?, 'Sent', 1, 1)`,
		id, "WA"+id, body); err != nil {
		t.Fatal(err)
	}
}

// The history a bridge kept before search existed is indexed by the
// migration; what is stored later is indexed as it is stored, and what a
// sweep deletes leaves the index with it.
func TestSearchIndexFollowsTheHistory(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), testKey, purpose)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := Migrate(ctx, db, migrations[:slices.Index(migrations, searchMigration)]); err != nil {
		t.Fatal(err)
	}
	insertInbox(t, db, 1, "the invoice for March")
	insertLogged(t, db, "msg_old", "your invoice is attached")
	if err := Migrate(ctx, db, migrations); err != nil {
		t.Fatal(err)
	}
	insertInbox(t, db, 2, "Café tomorrow? no invoice")
	insertLogged(t, db, "msg_new", "see you at the cafe")
	insertLogged(t, db, "msg_empty", "")

	in, out := searchHits(t, db, "invoice")
	if !slices.Equal(in, []string{"the invoice for March", "Café tomorrow? no invoice"}) || !slices.Equal(out, []string{"msg_old"}) {
		t.Fatalf("invoice: in %q, out %q", in, out)
	}
	if in, out = searchHits(t, db, "cafe"); len(in) != 1 || !slices.Equal(out, []string{"msg_new"}) {
		t.Fatalf("cafe (diacritics ignored): in %q, out %q", in, out)
	}
	if _, err := db.Exec(`DELETE FROM inbox WHERE id = 1; DELETE FROM messages WHERE id IN ('msg_old', 'msg_empty')`); err != nil {
		t.Fatal(err)
	}
	if in, out = searchHits(t, db, "invoice"); len(in) != 1 || len(out) != 0 {
		t.Fatalf("after the sweep: in %q, out %q", in, out)
	}
	var ids int
	if err := db.QueryRow(`SELECT count(*) FROM messages_search_ids`).Scan(&ids); err != nil || ids != 1 {
		t.Fatalf("messages_search_ids keeps %d rows (%v), want 1", ids, err)
	}
	// VACUUM may renumber the log's rowids; the index keeps its own numbers.
	if _, err := db.Exec(`VACUUM`); err != nil {
		t.Fatal(err)
	}
	if in, out = searchHits(t, db, "cafe"); len(in) != 1 || !slices.Equal(out, []string{"msg_new"}) {
		t.Fatalf("after VACUUM: in %q, out %q", in, out)
	}
}
