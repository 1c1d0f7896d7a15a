package whatsapp

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// A status goes to the recipients the post names, not to those of the
// account's status privacy setting (here a whitelist of Bob, which the
// simulator answers when whatsmeow asks): Alice's phone decrypts it from
// status@broadcast with its colour and font, and her receipt comes back.
// Without the patch's SendRequestExtra.StatusRecipients whatsmeow sends it
// to Bob.
func TestStatusReachesOnlyItsRecipients(t *testing.T) {
	testutil.SkipIfShort(t, "simulator")
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	linkByQR(t, sim, r)
	alice, bob := sim.Contact("4915100000002", "Alice"), sim.Contact("4915100000003", "Bob")
	sim.Phone(account).SetStatusAudience(bob)
	font := bridge.StatusFonts["system_bold"]
	post := &bridge.StatusPost{Recipients: []bridge.Recipient{bridge.PhoneRecipient(alice.Number())}, BackgroundARGB: 0xFF1E88E5, Font: &font}

	m := sendOut(t, r, alice, bridge.Outgoing{Recipient: bridge.StatusBroadcast, Type: bridge.TypeText, Text: "Open on Sunday", Status: post})
	text := m.Content().GetExtendedTextMessage()
	if m.Chat != types.StatusBroadcastJID || m.EncType != "skmsg" || text.GetText() != "Open on Sunday" ||
		text.GetBackgroundArgb() != 0xFF1E88E5 || text.GetFont() != waE2E.ExtendedTextMessage_SYSTEM_BOLD {
		t.Errorf("Alice's phone shows %v from %s (%s)", text, m.Chat, m.EncType)
	}
	// Send returned after the server's ack, by which time every device the
	// message named had it.
	if slices.ContainsFunc(bob.Received(), func(b *wasim.Message) bool { return b.ID == m.ID }) {
		t.Error("Bob, who is not a recipient, got the status")
	}
	waitFor(t, "Alice's receipt", func() bool {
		r.events.mu.Lock()
		defer r.events.mu.Unlock()
		return slices.ContainsFunc(r.events.receipts, func(rc bridge.Receipt) bool { return slices.Contains(rc.WhatsAppIDs, m.ID) })
	})

	image := sendOut(t, r, alice, bridge.Outgoing{Recipient: bridge.StatusBroadcast, Type: bridge.TypeImage, Text: "the menu",
		FilePath: spoolFile(t, testPNG), MimeType: "image/png", Status: &bridge.StatusPost{Recipients: post.Recipients}})
	if v := image.Media; image.Chat != types.StatusBroadcastJID || v == nil || v.Err != nil || v.Kind != "image" ||
		!bytes.Equal(v.Data, testPNG) || v.Caption != "the menu" {
		t.Errorf("image status: %+v from %s", v, image.Chat)
	}
}

// testPNG is the smallest file the session sends as an image: only its
// bytes matter here.
var testPNG = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{3}, 64)...)

// With status updates on, a contact's status arrives as an Incoming of the
// status broadcast, with who posted it and what (a text, an image with its
// media), never as a message of the contact's chat.
func TestStatusUpdatesArriveWhenOn(t *testing.T) {
	testutil.SkipIfShort(t, "simulator")
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t), func(o *Options) { o.StatusUpdates = true })
	linkByQR(t, sim, r)
	alice := sim.Contact("4915100000002", "Alice")
	me := sim.Phone(account)
	ctx, cancel := context.WithTimeout(context.Background(), wasimtest.WaitTimeout)
	defer cancel()

	id, err := alice.PostStatus(ctx, &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{
		Text: proto.String("Back on Monday"), BackgroundArgb: proto.Uint32(0xFF000000)}}, me)
	if err != nil {
		t.Fatal(err)
	}
	in := waitIncoming(t, r, id)
	if !in.IsStatus() || in.From != bridge.PhoneRecipient(alice.Number()) || in.Type != "text" ||
		in.Text != "Back on Monday" || in.PushName != "Alice" {
		t.Errorf("status update: %+v", in)
	}
	photo, err := alice.PostMediaStatus(ctx, wasim.Attachment{Kind: "image", Data: testPNG, MimeType: "image/png", Caption: "view"}, me)
	if err != nil {
		t.Fatal(err)
	}
	in = waitIncoming(t, r, photo)
	if !in.IsStatus() || in.Type != "image" || in.Text != "view" || in.Media == nil || in.Media.MimeType != "image/png" ||
		in.Media.Size != uint64(len(testPNG)) || len(in.Media.Source) == 0 {
		t.Errorf("image status update: %+v", in)
	}
}

// Off (the default), a contact's status is acknowledged (the phone gets
// the delivery receipt, which whatsmeow sends once the handler returned)
// and passed on to nobody; the contact's next message still arrives.
func TestStatusUpdatesDroppedWhenOff(t *testing.T) {
	testutil.SkipIfShort(t, "simulator")
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t))
	linkByQR(t, sim, r)
	alice := sim.Contact("4915100000002", "Alice")
	ctx, cancel := context.WithTimeout(context.Background(), wasimtest.WaitTimeout)
	defer cancel()

	id, err := alice.PostStatus(ctx, &waE2E.Message{Conversation: proto.String("Back on Monday")}, sim.Phone(account))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.WaitTick(ctx, id, types.ReceiptTypeDelivered); err != nil {
		t.Fatalf("the status was not acknowledged: %v", err)
	}
	if got := r.events.received()[id]; len(got) != 0 {
		t.Errorf("a status passed on with status updates off: %+v", got)
	}
	next, err := alice.SendText(ctx, sim.Phone(account).JID(), "hello")
	if err != nil {
		t.Fatal(err)
	}
	if in := waitIncoming(t, r, next); in.IsStatus() || in.Chat != bridge.PhoneRecipient(alice.Number()) {
		t.Errorf("the next message: %+v", in)
	}
}
