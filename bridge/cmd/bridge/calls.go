package main

import (
	"context"
	"database/sql"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
)

// callEvents puts the calls WhatsApp reports into the webhook outbox
// (call.offer, call.ended) and answers a call REJECT_CALLS rejected with
// REJECT_CALLS_REPLY, through the send queue like any message (paced,
// logged), at most once a day per caller: the idempotency key names the
// caller and the day, so that a caller who rings again and again, or an
// offer WhatsApp delivers again, gets one answer, not one per call.
type callEvents struct {
	webhooks bridge.Outbox
	writer   *sqlite.Batcher
	app      *app // its send queue, made after the session
	reply    string
	log      logr.Logger
}

var _ whatsapp.CallEvents = callEvents{}

func (e callEvents) CallOffered(ctx context.Context, c bridge.Call) error {
	if err := e.enqueue(ctx, c); err != nil {
		return err
	}
	if c.Rejected != "" && e.reply != "" {
		// Not on whatsmeow's event goroutine: the send waits for its pace.
		go e.answer(context.WithoutCancel(ctx), c)
	}
	return nil
}

func (e callEvents) CallEnded(ctx context.Context, c bridge.Call) error {
	return e.enqueue(ctx, c)
}

func (e callEvents) enqueue(ctx context.Context, c bridge.Call) error {
	// Logged whatever the subscriptions: GET /api/events and the
	// dashboard's calls read the event log.
	return e.writer.Do(ctx, func(tx *sql.Tx) error { return e.webhooks.Call(ctx, tx, c) })
}

func (e callEvents) answer(ctx context.Context, c bridge.Call) {
	_, err := e.app.queue.Submit(ctx, sendqueue.Request{Recipient: c.From, IdempotencyKey: callReplyKey(c),
		Items: []sendqueue.Item{{Type: bridge.TypeText, Text: e.reply}}})
	if err != nil {
		e.log.Error(err, "answer a rejected call", "call_id", c.ID)
	}
}

// callReplyKey is the idempotency key of the answer to a rejected call: one
// per caller and UTC day.
func callReplyKey(c bridge.Call) string {
	return "call-reply:" + c.From.String() + ":" + c.At.UTC().Format(time.DateOnly)
}
