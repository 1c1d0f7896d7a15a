package main

import (
	"context"
	"database/sql"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/bridge/whatsapp"
)

// groupEvents puts what WhatsApp reports of the account's groups into the
// webhook outbox (group.participants, group.update), before the
// notification is acked.
type groupEvents struct {
	webhooks *webhook.Outbox
	writer   *sqlite.Batcher // bridge.db's one writer: a change's events in one transaction
}

var _ whatsapp.GroupEvents = groupEvents{}

func (e groupEvents) GroupChanged(ctx context.Context, c bridge.GroupChange) error {
	evs := webhook.GroupEvents(c)
	if len(evs) == 0 || !e.webhooks.Enabled() {
		return nil
	}
	return e.writer.Do(ctx, func(tx *sql.Tx) error {
		for _, ev := range evs {
			if err := e.webhooks.Enqueue(ctx, tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
}

// callEvents puts the calls WhatsApp reports into the webhook outbox
// (call.offer, call.ended) and answers a call REJECT_CALLS rejected with
// REJECT_CALLS_REPLY, through the send queue like any message (paced,
// logged; the call's id as its idempotency key, so that an offer WhatsApp
// delivers again is answered once).
type callEvents struct {
	webhooks *webhook.Outbox
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
	if !e.webhooks.Enabled() {
		return nil
	}
	return e.writer.Do(ctx, func(tx *sql.Tx) error { return e.webhooks.Enqueue(ctx, tx, webhook.CallEvent(c)) })
}

func (e callEvents) answer(ctx context.Context, c bridge.Call) {
	_, err := e.app.queue.Submit(ctx, sendqueue.Request{Recipient: c.From, IdempotencyKey: "call-reply:" + c.ID,
		Items: []sendqueue.Item{{Type: bridge.TypeText, Text: e.reply}}})
	if err != nil {
		e.log.Error(err, "answer a rejected call", "call_id", c.ID)
	}
}
