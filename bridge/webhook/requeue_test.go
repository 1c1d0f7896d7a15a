package webhook

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

func (o testOutbox) requeue(tb testing.TB, ev Event) bool {
	tb.Helper()
	var did bool
	err := o.batcher.Do(context.Background(), func(tx *sql.Tx) (err error) {
		did, err = o.Requeue(context.Background(), tx, ev, "")
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return did
}

// statusOf reads the outbox rows of a webhook-id: their count and the
// status of the last.
func (o testOutbox) statusOf(tb testing.TB, id string) (int, string) {
	tb.Helper()
	var n int
	var status sql.NullString
	err := o.opts.DB.QueryRow(`SELECT count(*), max(status) FROM webhook_outbox WHERE webhook_id = ?`, id).Scan(&n, &status)
	if err != nil {
		tb.Fatal(err)
	}
	return n, status.String
}

// A requeued event is delivered again with its own webhook-id and body; a
// requeue of an event still pending stores nothing more; an event given an
// id is enqueued under it.
func TestRequeueKeepsTheWebhookID(t *testing.T) {
	r := newReceiver(t, true)
	o := openOutbox(t, r.srv.URL, nil)
	ev := MessageUpsert(bridge.Incoming{WhatsAppID: "W1", From: testPhone, Chat: testPhone, Type: "text", Text: "hi",
		Timestamp: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)})
	ev.ID = NewID()
	o.enqueue(t, ev)
	if o.requeue(t, ev) {
		t.Error("a pending event was requeued")
	}
	if n, status := o.statusOf(t, ev.ID); n != 1 || status != "pending" {
		t.Fatalf("after a requeue of a pending event: %d rows, %s", n, status)
	}
	o.run(t)
	r.waitCount(t, 1, 10*time.Second)
	o.waitDrained(t, 5*time.Second)

	if !o.requeue(t, ev) {
		t.Fatal("a delivered event was not requeued")
	}
	r.waitCount(t, 2, 10*time.Second)
	got := r.deliveries()
	if got[0].id != ev.ID || got[1].id != ev.ID || got[0].body != got[1].body {
		t.Errorf("deliveries %+v, want two of %s with one body", got, ev.ID)
	}
	o.waitDrained(t, 5*time.Second)
	if n, status := o.statusOf(t, ev.ID); n != 1 || status != "delivered" {
		t.Errorf("after the replay: %d rows, %s", n, status)
	}

	if _, err := o.Requeue(context.Background(), nil, Event{Type: TypeMessageUpsert}, ""); err == nil {
		t.Error("an event without its id was requeued")
	}
}

// A dead letter is requeued as a fresh pending row; with webhooks off
// nothing is stored.
func TestRequeueOfADeadLetterAndWebhooksOff(t *testing.T) {
	o := openOutbox(t, "http://127.0.0.1:1/hook", nil)
	ev := connected()
	ev.ID = NewID()
	o.enqueue(t, ev)
	if _, err := o.opts.DB.Exec(`UPDATE webhook_outbox SET status = 'dead' WHERE webhook_id = ?`, ev.ID); err != nil {
		t.Fatal(err)
	}
	if !o.requeue(t, ev) {
		t.Fatal("a dead letter was not requeued")
	}
	if n, status := o.statusOf(t, ev.ID); n != 1 || status != "pending" {
		t.Errorf("requeued dead letter: %d rows, %s", n, status)
	}
	off := openOutbox(t, "", nil)
	if off.requeue(t, ev) {
		t.Error("requeued with webhooks off")
	}
	if n, _ := off.statusOf(t, ev.ID); n != 0 {
		t.Errorf("webhooks off stored %d rows", n)
	}
}
