package wasim_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

func textMessage(text string) *waE2E.Message {
	return &waE2E.Message{Conversation: proto.String(text)}
}

func sendText(t testing.TB, tc *wasimtest.Client, to types.JID, text string) types.MessageID {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wasimtest.WaitTimeout)
	defer cancel()
	resp, err := tc.SendMessage(ctx, to, &waE2E.Message{Conversation: proto.String(text)})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if resp.Timestamp.IsZero() {
		t.Fatalf("SendMessage returned no server timestamp: %+v", resp)
	}
	return resp.ID
}

func waitMessage(t testing.TB, u *wasim.User, id types.MessageID) *wasim.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wasimtest.WaitTimeout)
	defer cancel()
	m, err := u.WaitMessage(ctx, id)
	if err != nil {
		t.Fatalf("%s did not receive %s: %v", u.JID(), id, err)
	}
	if m.Err != nil {
		t.Fatalf("%s could not read %s: %v", u.JID(), id, m.Err)
	}
	return m
}

func TestSendTextToContact(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915200000001")
	alice := sim.Contact("4915200000002", "Alice")
	tc := wasimtest.LinkByQR(t, sim, phone)

	id := sendText(t, tc, alice.JID(), "hello *bold*\nline two")
	m := waitMessage(t, alice, id)
	// Direct messages are addressed to the contact's LID, which the client
	// learned from the server before its first send (usync <lid/>).
	if m.Text() != "hello *bold*\nline two" || m.EncType != "pkmsg" || m.Chat != alice.LID() || m.Sender != *tc.Store.ID {
		t.Fatalf("alice got %q (%s) in %s from %s", m.Text(), m.EncType, m.Chat, m.Sender)
	}
	// The account's own phone gets the DeviceSentMessage copy.
	own := waitMessage(t, phone, id)
	if own.Message.GetDeviceSentMessage().GetDestinationJID() != alice.LID().String() || own.Text() != m.Text() {
		t.Fatalf("own phone got %v", own.Message)
	}
	// Until Alice answers, the session stays unconfirmed and whatsmeow keeps
	// sending prekey messages.
	id2 := sendText(t, tc, alice.JID(), "second")
	if m2 := waitMessage(t, alice, id2); m2.EncType != "pkmsg" || m2.Text() != "second" {
		t.Fatalf("second message %q as %s", m2.Text(), m2.EncType)
	}
}

func TestAutomaticReceipts(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915200000011")
	bob := sim.Contact("4915200000012", "Bob")
	bob.SetReceiptMode(wasim.ReceiptsRead)
	tc := wasimtest.LinkByQR(t, sim, phone)

	id := sendText(t, tc, bob.JID(), "read me")
	forID := func(r *events.Receipt) bool { return len(r.MessageIDs) == 1 && r.MessageIDs[0] == id }
	delivered := wasimtest.WaitEvent(t, tc, forID)
	if delivered.Type != types.ReceiptTypeDelivered || delivered.Chat != bob.JID() || delivered.Sender.User != bob.JID().User {
		t.Fatalf("first receipt %+v", delivered)
	}
	read := wasimtest.WaitEvent(t, tc, forID)
	if read.Type != types.ReceiptTypeRead {
		t.Fatalf("second receipt type %q, want read", read.Type)
	}
}

func TestReceiptsOnCommand(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915200000021")
	carol := sim.Contact("4915200000022", "Carol")
	carol.SetReceiptMode(wasim.ReceiptsNone)
	tc := wasimtest.LinkByQR(t, sim, phone)

	id := sendText(t, tc, carol.JID(), "hi")
	waitMessage(t, carol, id)
	if err := carol.SendReceipt("unknown", types.ReceiptTypeRead); err == nil {
		t.Fatal("receipt for an unknown message accepted")
	}
	if err := carol.SendReceipt(id, types.ReceiptTypeRead); err != nil {
		t.Fatal(err)
	}
	r := wasimtest.WaitEvent(t, tc, func(r *events.Receipt) bool { return r.MessageIDs[0] == id })
	if r.Type != types.ReceiptTypeRead || r.IsFromMe || r.Chat != carol.JID() {
		t.Fatalf("receipt %+v", r)
	}
}

func TestIncomingMessages(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915200000031")
	dave := sim.Contact("4915200000032", "Dave")
	tc := wasimtest.LinkByQR(t, sim, phone)
	ctx := wasimtest.Context(t)

	id, err := dave.SendText(ctx, phone.JID(), "hi from Dave")
	if err != nil {
		t.Fatal(err)
	}
	m := wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == id })
	if m.Message.GetConversation() != "hi from Dave" || m.Info.Sender != dave.JID() || m.Info.Chat != dave.JID() ||
		m.Info.PushName != "Dave" || m.Info.IsFromMe {
		t.Fatalf("message %q info %+v", m.Message.GetConversation(), m.Info)
	}
	// A reply in the session the contact started, then the contact's second
	// message: both directions continue with "msg".
	reply := sendText(t, tc, dave.JID(), "hi Dave")
	if got := waitMessage(t, dave, reply); got.EncType != "msg" {
		t.Fatalf("reply sent as %s", got.EncType)
	}
	id2, err := dave.SendText(ctx, phone.JID(), "second")
	if err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == id2 && m.Message.GetConversation() == "second" })
	// The client acknowledges with a delivery receipt, which Dave's phone
	// shows; closing the client while whatsmeow still sends it would race
	// inside whatsmeow (FrameSocket.SendFrame reads conn without its lock).
	if _, err := dave.WaitTick(ctx, id2, types.ReceiptTypeDelivered); err != nil {
		t.Fatalf("no delivery receipt for Dave's message: %v", err)
	}

	// Messages sent while the client is offline arrive when it logs in.
	tc.Disconnect()
	id3, err := dave.SendText(ctx, phone.JID(), "while you were away")
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.Connect(); err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == id3 })
}
