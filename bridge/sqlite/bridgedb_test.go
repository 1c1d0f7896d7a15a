package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
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
