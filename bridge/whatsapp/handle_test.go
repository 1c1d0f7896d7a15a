package whatsapp

import (
	"errors"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge"
)

// A message or receipt the wiring fails to store is not acked: the receipt's
// handler returns false, the message's store reports the error to the acks,
// so whatsmeow sends no ack and WhatsApp delivers it again.
func TestFailedEventsRefuseTheAck(t *testing.T) {
	r := startWith(t, nil, newBridgeFiles(t)) // never connects: no account is linked
	cli := r.client.Load()
	pn := types.NewJID("4915100000002", types.DefaultUserServer)
	msg := &events.Message{
		Info:    types.MessageInfo{MessageSource: types.MessageSource{Chat: pn, Sender: pn}, ID: "ABC"},
		Message: &waE2E.Message{Conversation: proto.String("hi")},
	}
	receipt := &events.Receipt{MessageIDs: []types.MessageID{"XYZ"}, Type: types.ReceiptTypeRead}

	if !r.handleEvent(cli, msg) || !r.handleEvent(cli, receipt) {
		t.Fatal("stored events were refused")
	}
	if len(r.events.incoming) != 1 || r.events.incoming[0].WhatsAppID != "ABC" ||
		len(r.events.receipts) != 1 || r.events.receipts[0].Status != bridge.StatusRead || r.events.receipts[0].WhatsAppIDs[0] != "XYZ" {
		t.Fatalf("events heard: %+v, %+v", r.events.incoming, r.events.receipts)
	}

	r.events.mu.Lock()
	r.events.incomingErr, r.events.receiptErr = errors.New("disk full"), errors.New("disk full")
	r.events.mu.Unlock()
	// A message is handed to the store and its ack waits for the commit
	// (acks.go): a failed store leaves it unacked.
	if !r.handleEvent(cli, msg) {
		t.Error("a message was refused before its store's outcome")
	}
	if err := firstErr(r.acks.stored[keyOf(&msg.Info)]); err == nil {
		t.Error("a message that was not stored would be acked")
	}
	if r.handleEvent(cli, receipt) {
		t.Error("a receipt that was not applied was acked")
	}
	// Whatever does not concern the wiring is acked.
	if !r.handleEvent(cli, &events.Message{Info: types.MessageInfo{MessageSource: types.MessageSource{IsFromMe: true}}}) {
		t.Error("our own message was refused")
	}
}
