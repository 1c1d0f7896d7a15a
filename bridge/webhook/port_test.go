package webhook

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// The outbox is the domain's one port for events: each part hands it its
// change in its own transaction and the outbox encodes the event, so a
// message status, a session state, a group change and a call each land in
// the event log as their own event type, and nothing when the transaction
// rolls back.
func TestOutboxAsThePort(t *testing.T) {
	o := openOutbox(t, "http://127.0.0.1:9/hook", nil)
	ctx := context.Background()
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	var port bridge.Outbox = o.Outbox
	group := bridge.Recipient{Kind: bridge.RecipientGroup, ID: "120363025246125486"}
	caller := bridge.PhoneRecipient("4915100000001")
	err := o.batcher.Do(ctx, func(tx *sql.Tx) error {
		return errorsOf(
			port.MessageStatus(ctx, tx, bridge.Message{WhatsAppID: "3EB0A", Recipient: caller, Status: bridge.StatusDelivered, UpdatedAt: at}),
			port.SessionStatus(ctx, tx, bridge.SessionStatus{State: contract.StateConnected}),
			port.GroupChanged(ctx, tx, bridge.GroupChange{Group: group, By: caller, At: at, MemberAction: bridge.MemberAdd,
				Members: []bridge.GroupMember{{Phone: "491512345678"}}}),
			port.Call(ctx, tx, bridge.Call{ID: "C1", From: caller, At: at}),
		)
	})
	if err != nil {
		t.Fatal(err)
	}
	rolledBack := o.batcher.Do(ctx, func(tx *sql.Tx) error {
		if err := port.MessageStatus(ctx, tx, bridge.Message{WhatsAppID: "3EB0B", Recipient: caller, Status: bridge.StatusRead, UpdatedAt: at}); err != nil {
			return err
		}
		return context.Canceled
	})
	if rolledBack == nil {
		t.Fatal("the failed transaction committed")
	}
	logged, err := o.EventsAfter(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, l := range logged {
		types = append(types, l.Type)
	}
	want := "message.status session.status group.participants call.offer"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("logged %q, want %q", got, want)
	}
}

func errorsOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
