package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// A message logged by a bridge at schema 4 survives the rebuild of the
// messages table at step 5, and the rebuilt table takes the new types.
func TestMessagesSurviveStep5(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), testKey, purpose)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := Migrate(ctx, db, migrations[:4]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, body,
		status, next_attempt_at, created_at, updated_at)
		VALUES ('msg_1', 'WA1', 'req_1', 0, '4915112345678', 'text', 'hello', 'Queued', 5, 1, 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, status,
		created_at, updated_at) VALUES ('msg_2', 'WA2', 'req_2', 0, '4915112345678', 'reaction', 'Queued', 1, 1)`); err == nil {
		t.Fatal("schema 4 took a reaction")
	}
	if err := Migrate(ctx, db, migrations); err != nil {
		t.Fatal(err)
	}
	var body, details string
	var next int64
	if err := db.QueryRow(`SELECT body, next_attempt_at, details FROM messages WHERE id = 'msg_1'`).Scan(&body, &next, &details); err != nil {
		t.Fatal(err)
	}
	if body != "hello" || next != 5 || details != "{}" {
		t.Fatalf("after step 5: body %q, next_attempt_at %d, details %q", body, next, details)
	}
	if _, err := db.Exec(`INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, status,
		target_id, emoji, created_at, updated_at)
		VALUES ('msg_2', 'WA2', 'req_2', 0, '4915112345678', 'reaction', 'Queued', 'WA1', '👍', 1, 1)`); err != nil {
		t.Fatalf("schema 5 refused a reaction: %v", err)
	}
}

// The log's CHECK takes exactly the domain's outgoing types.
func TestMessageTypesMatchSchema(t *testing.T) {
	db, err := OpenBridgeDB(context.Background(), filepath.Join(t.TempDir(), "bridge.db"), testKey)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	insert := func(i int, typ string) error {
		_, err := db.Exec(`INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, status,
			created_at, updated_at) VALUES (?, ?, 'req', ?, '4915112345678', ?, 'Queued', 1, 1)`,
			fmt.Sprint("msg_", i), fmt.Sprint("WA", i), i, typ)
		return err
	}
	for i, typ := range bridge.MessageTypes {
		if err := insert(i, string(typ)); err != nil {
			t.Errorf("type %s refused: %v", typ, err)
		}
	}
	if err := insert(len(bridge.MessageTypes), "sticker"); err == nil {
		t.Error("a type the domain does not know was stored")
	}
}

// The rebuild of the log for polls keeps every column of every row, and
// the rows' order, which the queue reads as the order of each chat.
func TestMessagesSurvivePollStep(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), testKey, purpose)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := Migrate(ctx, db, migrations[:len(migrations)-1]); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"msg_b", "msg_a"} {
		if _, err := db.Exec(`INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, body,
			status, created_at, updated_at, reply_to, details, account)
			VALUES (?, ?, 'req', 0, '4915112345678', 'text', 'hi', 'Queued', 1, 1, 'WA0', '{"ptt":true}', '4915100000000')`,
			id, "WA"+id); err != nil {
			t.Fatal(err)
		}
	}
	if err := Migrate(ctx, db, migrations); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT id, reply_to, details, account FROM messages ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id, reply, details, account string
		if err := rows.Scan(&id, &reply, &details, &account); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(id, reply, details, account))
	}
	want := []string{`msg_bWA0{"ptt":true}4915100000000`, `msg_aWA0{"ptt":true}4915100000000`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the poll step: %v, want %v", got, want)
	}
}

// The step that adds behind: the pending rows of a webhook subscription's key queued behind
// its head are marked behind, and the triggers make the next row the head
// when the head is delivered, dead or deleted, in the same transaction.
func TestWebhookRowsWaitBehindTheirHead(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), testKey, purpose)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := slices.IndexFunc(migrations, func(m string) bool { return strings.Contains(m, "ADD COLUMN behind") })
	if err := Migrate(ctx, db, migrations[:before]); err != nil {
		t.Fatal(err)
	}
	// Chat a: 1 delivered, 2-4 pending; chat b: 5 pending; chat a of crm: 6 pending.
	for _, r := range []struct {
		id       int
		sub, key string
		status   string
	}{{1, "default", "a", "delivered"}, {2, "default", "a", "pending"}, {3, "default", "a", "pending"},
		{4, "default", "a", "pending"}, {5, "default", "b", "pending"}, {6, "crm", "a", "pending"}} {
		if _, err := db.Exec(`INSERT INTO webhook_outbox (id, subscription, webhook_id, event, payload, ordering_key, status,
			next_attempt_at, expires_at, created_at) VALUES (?, ?, ?, 'message.upsert', '{}', ?, ?, 1, 2, 1)`,
			r.id, r.sub, fmt.Sprint("msg_", r.id), r.key, r.status); err != nil {
			t.Fatal(err)
		}
	}
	if err := Migrate(ctx, db, migrations); err != nil {
		t.Fatal(err)
	}
	heads := func() string {
		t.Helper()
		var s string
		if err := db.QueryRow(`SELECT group_concat(id, ',') FROM (SELECT id FROM webhook_outbox
			WHERE status = 'pending' AND behind = 0 ORDER BY id)`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, step := range []struct{ change, want string }{
		{``, "2,5,6"},
		{`UPDATE webhook_outbox SET status = 'delivered' WHERE id = 2`, "3,5,6"},
		{`UPDATE webhook_outbox SET attempts = 1, next_attempt_at = 9 WHERE id = 3`, "3,5,6"}, // a retry stays the head
		{`UPDATE webhook_outbox SET status = 'dead' WHERE id = 3`, "4,5,6"},
		{`DELETE FROM webhook_outbox WHERE id = 4`, "5,6"},
		{`DELETE FROM webhook_outbox WHERE id = 1`, "5,6"}, // an ended row: nothing to do
	} {
		if step.change != "" {
			if _, err := db.Exec(step.change); err != nil {
				t.Fatal(err)
			}
		}
		if got := heads(); got != step.want {
			t.Errorf("after %q: heads %s, want %s", step.change, got, step.want)
		}
	}
}
