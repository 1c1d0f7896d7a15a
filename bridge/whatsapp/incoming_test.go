package whatsapp

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge"
)

func TestIncoming(t *testing.T) {
	pn := types.NewJID("4915100000002", types.DefaultUserServer)
	lid := types.NewJID("123456789", types.HiddenUserServer)
	group := types.NewJID("120363000000000001", types.GroupServer)
	phone := bridge.PhoneRecipient(pn.User)
	inGroup := bridge.Recipient{Kind: bridge.RecipientGroup, ID: group.User}
	lidRecipient := bridge.Recipient{Kind: bridge.RecipientLID, ID: lid.User}
	// A client on an empty store, whose LID map knows no phone number (an
	// unlinked device gets its stores at pairing; this one gets the map now).
	creds := newBridgeFiles(t).credentials(t)
	creds.device.LIDs = creds.container.LIDMap
	cli := whatsmeow.NewClient(creds.device, nil)
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	info := func(sender, alt, chat types.JID, fromMe bool) types.MessageInfo {
		return types.MessageInfo{
			MessageSource: types.MessageSource{Chat: chat, Sender: sender, SenderAlt: alt, IsFromMe: fromMe},
			ID:            "ABC", PushName: "Alice", Timestamp: at,
		}
	}
	for _, c := range []struct {
		name string
		info types.MessageInfo
		msg  *waE2E.Message
		want *bridge.Incoming // nil: skipped
	}{
		{"text", info(pn, types.EmptyJID, pn, false), &waE2E.Message{Conversation: proto.String("hi")},
			&bridge.Incoming{Type: "text", Text: "hi", From: phone, Chat: phone}},
		{"extended text from a LID sender with its phone number", info(lid, pn, pn, false),
			&waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String("link")}},
			&bridge.Incoming{Type: "text", Text: "link", From: phone, Chat: phone}},
		{"document in a group", info(pn, types.EmptyJID, group, false),
			&waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{Caption: proto.String("cv"), Mimetype: proto.String("application/pdf"), FileLength: proto.Uint64(42), FileName: proto.String("cv.pdf")}},
			&bridge.Incoming{Type: "document", Text: "cv", From: phone, Chat: inGroup, Media: &bridge.Media{MimeType: "application/pdf", Size: 42, FileName: "cv.pdf"}}},
		{"image", info(pn, types.EmptyJID, pn, false),
			&waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: proto.String("look"), Mimetype: proto.String("image/jpeg"), FileLength: proto.Uint64(7)}},
			&bridge.Incoming{Type: "image", Text: "look", From: phone, Chat: phone, Media: &bridge.Media{MimeType: "image/jpeg", Size: 7}}},
		{"from me", info(pn, types.EmptyJID, pn, true), &waE2E.Message{Conversation: proto.String("hi")}, nil},
		{"sender key distribution only", info(pn, types.EmptyJID, group, false),
			&waE2E.Message{SenderKeyDistributionMessage: &waE2E.SenderKeyDistributionMessage{GroupID: proto.String(group.String())}}, nil},
		{"protocol message", info(pn, types.EmptyJID, pn, false), &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{}}, nil},
		{"LID sender without a known phone number", info(lid, types.EmptyJID, lid, false), &waE2E.Message{Conversation: proto.String("hi")},
			&bridge.Incoming{Type: "text", Text: "hi", From: lidRecipient, Chat: lidRecipient}},
		{"status broadcast", info(pn, types.EmptyJID, types.StatusBroadcastJID, false), &waE2E.Message{Conversation: proto.String("hi")}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := incoming(context.Background(), cli, &events.Message{Info: c.info, Message: c.msg})
			if c.want == nil {
				if ok {
					t.Fatalf("not skipped: %+v", got)
				}
				return
			}
			want := *c.want
			want.WhatsAppID, want.PushName, want.Timestamp = "ABC", "Alice", at
			if !ok || got.Type != want.Type || got.Text != want.Text || got.From != want.From || got.Chat != want.Chat ||
				got.WhatsAppID != want.WhatsAppID || got.PushName != want.PushName || !got.Timestamp.Equal(at) ||
				!sameMedia(got.Media, want.Media) {
				t.Fatalf("got %+v (%v), want %+v", got, ok, want)
			}
		})
	}
}

// What a contact sends is bounded where it is converted, before it is
// stored or fanned out: a 12 MB text, a long caption and file name, an
// edit, a vCard, a push name are cut, each named with its whole size.
func TestIncomingIsBoundedWhereConverted(t *testing.T) {
	pn := types.NewJID("4915100000002", types.DefaultUserServer)
	cli := whatsmeow.NewClient(newBridgeFiles(t).credentials(t).device, nil)
	huge := strings.Repeat("x", 12<<20)
	info := types.MessageInfo{MessageSource: types.MessageSource{Chat: pn, Sender: pn}, ID: "ABC", PushName: huge}
	for name, msg := range map[string]*waE2E.Message{
		"text":     {Conversation: proto.String(huge)},
		"caption":  {DocumentMessage: &waE2E.DocumentMessage{Caption: proto.String(huge), FileName: proto.String(huge), Mimetype: proto.String("application/pdf")}},
		"edit":     {ProtocolMessage: &waE2E.ProtocolMessage{Type: waE2E.ProtocolMessage_MESSAGE_EDIT.Enum(), Key: &waCommon.MessageKey{ID: proto.String("T1")}, EditedMessage: &waE2E.Message{Conversation: proto.String(huge)}}},
		"vcard":    {ContactMessage: &waE2E.ContactMessage{DisplayName: proto.String("Bo"), Vcard: proto.String(huge)}},
		"location": {LocationMessage: &waE2E.LocationMessage{Name: proto.String(huge), Comment: proto.String("here")}},
	} {
		in, ok := incoming(context.Background(), cli, &events.Message{Info: info, Message: msg})
		if !ok {
			t.Fatalf("%s: skipped", name)
		}
		if len(in.PushName) > 1024 || len(in.Text) > bridge.MaxIncomingText || len(in.Truncated) < 2 ||
			(in.Media != nil && len(in.Media.FileName) > 1024) || (len(in.Contacts) > 0 && len(in.Contacts[0].VCard) > bridge.MaxIncomingVCard) ||
			(in.Location != nil && len(in.Location.Name) > 1024) {
			t.Errorf("%s: push name %d bytes, text %d, cuts %+v", name, len(in.PushName), len(in.Text), in.Truncated)
		}
		for _, c := range in.Truncated {
			if c.Size != len(huge) {
				t.Errorf("%s: cut %s reported as %d bytes, want %d", name, c.Field, c.Size, len(huge))
			}
		}
	}
}

// sameMedia compares what message.upsert reports of two attachments (the
// download source aside).
func sameMedia(a, b *bridge.Media) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Source, y.Source = nil, nil
	return x.ID == y.ID && x.MimeType == y.MimeType && x.Size == y.Size && x.FileName == y.FileName &&
		x.SHA256 == y.SHA256 && x.PTT == y.PTT
}
