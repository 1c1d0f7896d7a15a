package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

func statusEvents(msgs, perMsg int) []Event {
	statuses := []bridge.Status{bridge.StatusSent, bridge.StatusDelivered, bridge.StatusRead}[:perMsg]
	var evs []Event
	for i := range msgs {
		for _, s := range statuses {
			evs = append(evs, MessageStatus(fmt.Sprintf("WID%03d", i), testPhone, s, time.Now()))
		}
	}
	return evs
}

func payloadOf(t *testing.T, d delivery) messageStatusPayload {
	t.Helper()
	var p messageStatusPayload
	if err := json.Unmarshal([]byte(d.body), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// The receiver is down (500) for a while, then up: every event arrives;
// repeats carry the same webhook-id and body; per message the statuses
// arrive in order.
func TestReceiverDownThenUp(t *testing.T) {
	testutil.SkipIfShort(t, "waits out retry backoffs for several seconds")
	r := newReceiver(t, true)
	r.answer.Store(http.StatusInternalServerError)
	o := startOutbox(t, r.srv.URL, nil)
	evs := statusEvents(20, 3)
	for _, ev := range evs { // one transaction each, like real status changes
		o.enqueue(t, ev)
	}
	// Up once the first event of every message has been refused.
	testutil.Eventually(t, 30*time.Second, func() bool { return r.hits.Load() >= 20 }, "the outbox did not try every message")
	r.answer.Store(0)
	r.waitCount(t, int64(len(evs)), 30*time.Second)

	bodies := map[string]string{}
	order := map[string][]string{}
	for _, d := range r.deliveries() {
		if b, seen := bodies[d.id]; seen {
			if b != d.body {
				t.Errorf("webhook-id %s delivered with two bodies", d.id)
			}
			continue
		}
		bodies[d.id] = d.body
		p := payloadOf(t, d)
		order[p.WhatsAppID] = append(order[p.WhatsAppID], p.Status)
		if p.Recipient != "491510000000@s.whatsapp.net" || p.Event != TypeMessageStatus {
			t.Errorf("payload %+v", p)
		}
	}
	if len(bodies) != len(evs) {
		t.Fatalf("%d distinct events arrived, want %d", len(bodies), len(evs))
	}
	for wid, got := range order {
		if strings.Join(got, ",") != "Sent,Delivered,Read" {
			t.Errorf("%s: statuses arrived as %v", wid, got)
		}
	}
	o.waitDrained(t, 5*time.Second)
}

// A Delivered enqueued after Read of the same message is never sent.
func TestLateStatusIsDropped(t *testing.T) {
	r := newReceiver(t, true)
	o := startOutbox(t, r.srv.URL, nil)
	o.enqueue(t, MessageStatus("W1", testPhone, bridge.StatusRead, time.Now()))
	o.enqueue(t, MessageStatus("W1", testPhone, bridge.StatusDelivered, time.Now()))
	o.enqueue(t, MessageStatus("W2", testPhone, bridge.StatusSent, time.Now()))
	r.waitCount(t, 2, 10*time.Second)
	o.waitDrained(t, 5*time.Second) // nothing else is left to deliver
	var got []string
	for _, d := range r.deliveries() {
		p := payloadOf(t, d)
		got = append(got, p.WhatsAppID+":"+p.Status)
	}
	if len(got) != 2 || strings.Contains(strings.Join(got, ","), "W1:Delivered") {
		t.Errorf("delivered %v", got)
	}
}

// Retry-After of a 429 delays the next attempt by that much.
func TestRetryAfterIsHonoured(t *testing.T) {
	testutil.SkipIfShort(t, "waits out a 2 s Retry-After")
	r := newReceiver(t, true)
	r.answer.Store(http.StatusTooManyRequests)
	r.header.Store("2")
	o := startOutbox(t, r.srv.URL, nil)
	start := time.Now()
	o.enqueue(t, connected())
	testutil.Eventually(t, 5*time.Second, func() bool { return r.hits.Load() >= 1 }, "the first attempt never came")
	r.answer.Store(0)
	r.waitCount(t, 1, 10*time.Second)
	if d := r.deliveries()[0].at.Sub(start); d < 2*time.Second {
		t.Errorf("redelivered after %v, before Retry-After's 2 s", d)
	}
}

// After MaxAge an event is a dead letter; Failed lists it and Redeliver
// puts it back (unknown and non-dead ids refused), and then it is delivered
// with its webhook-id.
func TestDeadLetterAndRedeliver(t *testing.T) {
	r := newReceiver(t, true)
	r.answer.Store(http.StatusBadGateway)
	o := startOutbox(t, r.srv.URL, func(opts *Options) { opts.MaxAge = 300 * time.Millisecond })
	o.enqueue(t, connected())
	ctx := context.Background()

	dead := testutil.Poll(t, 10*time.Second, func() ([]DeadLetter, bool) {
		dead, err := o.Failed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return dead, len(dead) > 0
	}, "no dead letter")
	if len(dead) != 1 || dead[0].Event != TypeSessionStatus || dead[0].Attempts < 1 || !strings.Contains(dead[0].LastError, "502") {
		t.Fatalf("dead letters %+v", dead)
	}
	if err := o.Redeliver(ctx, 999); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown id: %v", err)
	}
	r.answer.Store(0)
	if err := o.Redeliver(ctx, dead[0].ID); err != nil {
		t.Fatalf("redeliver: %v", err)
	}
	if err := o.Redeliver(ctx, dead[0].ID); !errors.Is(err, ErrNotDead) {
		t.Errorf("redeliver of a pending or delivered event: %v", err)
	}
	r.waitCount(t, 1, 10*time.Second)
	if got := r.deliveries()[0].id; got != dead[0].WebhookID {
		t.Errorf("redelivered as %s, want the same webhook-id %s", got, dead[0].WebhookID)
	}
	if left, err := o.Failed(ctx); err != nil || len(left) != 0 {
		t.Errorf("dead letters after redelivery: %+v, %v", left, err)
	}
}

// Without WEBHOOK_URL nothing is stored.
func TestDisabledStoresNothing(t *testing.T) {
	o := startOutbox(t, "", nil)
	o.enqueue(t, connected())
	if err := o.EnqueueNow(context.Background(), connected()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := o.opts.DB.QueryRow(`SELECT count(*) FROM webhook_outbox`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows, %v", n, err)
	}
}
