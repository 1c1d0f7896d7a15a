package whatsapp

import (
	"context"
	"testing"
	"time"

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
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := incoming(context.Background(), nil, &events.Message{Info: c.info, Message: c.msg})
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
				(got.Media == nil) != (want.Media == nil) || (got.Media != nil && *got.Media != *want.Media) {
				t.Fatalf("got %+v (%v), want %+v", got, ok, want)
			}
		})
	}
}
