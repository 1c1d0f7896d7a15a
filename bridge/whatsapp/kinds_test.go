package whatsapp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// Every kind of message a contact can send arrives with its fields.
func TestEveryKindArrives(t *testing.T) {
	sim, r, alice := linked(t)
	bob := sim.Contact("4915100000003", "Bob")
	to := sim.Phone(account).JID()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	send := func(msg *waE2E.Message) bridge.Incoming {
		t.Helper()
		id, err := alice.Send(ctx, to, msg)
		if err != nil {
			t.Fatal(err)
		}
		return waitIncoming(t, r, id)
	}
	first := send(&waE2E.Message{Conversation: proto.String("first")})
	if first.Type != "text" || first.Text != "first" || first.Quoted != "" || first.Mentions != nil {
		t.Errorf("text: %+v", first)
	}

	reply := send(&waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{
		Text: proto.String("@bob see above"),
		ContextInfo: &waE2E.ContextInfo{StanzaID: proto.String(first.WhatsAppID), Participant: proto.String(alice.JID().String()),
			MentionedJID: []string{bob.JID().String(), bob.LID().String()}},
	}})
	if reply.Quoted != first.WhatsAppID || len(reply.Mentions) != 2 ||
		reply.Mentions[0] != bridge.PhoneRecipient(bob.Number()) || reply.Mentions[1].JID() != bob.LID().String() {
		t.Errorf("reply: quoted %q mentions %+v", reply.Quoted, reply.Mentions)
	}

	loc := send(&waE2E.Message{LocationMessage: &waE2E.LocationMessage{DegreesLatitude: proto.Float64(52.52),
		DegreesLongitude: proto.Float64(13.405), Name: proto.String("Berlin"), Address: proto.String("Mitte")}})
	if loc.Type != "location" || loc.Location == nil || *loc.Location != (bridge.Location{Latitude: 52.52, Longitude: 13.405, Name: "Berlin", Address: "Mitte"}) {
		t.Errorf("location: %+v %+v", loc, loc.Location)
	}

	card := "BEGIN:VCARD\nVERSION:3.0\nFN:Carol\nTEL:+4915100000004\nEND:VCARD"
	contact := send(&waE2E.Message{ContactMessage: &waE2E.ContactMessage{DisplayName: proto.String("Carol"), Vcard: proto.String(card)}})
	if contact.Type != "contact" || len(contact.Contacts) != 1 || contact.Contacts[0] != (bridge.ContactCard{DisplayName: "Carol", VCard: card}) {
		t.Errorf("contact: %+v", contact)
	}

	key := &waCommon.MessageKey{RemoteJID: proto.String(to.String()), FromMe: proto.Bool(false), ID: proto.String(first.WhatsAppID)}
	react := send(&waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{Key: key, Text: proto.String("👍")}})
	unreact := send(&waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{Key: key, Text: proto.String("")}})
	if react.Type != bridge.IncomingReaction || react.TargetID != first.WhatsAppID || react.Emoji != "👍" ||
		unreact.Type != bridge.IncomingReaction || unreact.Emoji != "" {
		t.Errorf("reactions: %+v / %+v", react, unreact)
	}
	edit := send(&waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{Key: key, Type: waE2E.ProtocolMessage_MESSAGE_EDIT.Enum(),
		EditedMessage: &waE2E.Message{Conversation: proto.String("first, edited")}}})
	if edit.Type != bridge.IncomingEdit || edit.TargetID != first.WhatsAppID || edit.Text != "first, edited" {
		t.Errorf("edit: %+v", edit)
	}
	revoke := send(&waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{Key: key, Type: waE2E.ProtocolMessage_REVOKE.Enum()}})
	if revoke.Type != bridge.IncomingRevoke || revoke.TargetID != first.WhatsAppID {
		t.Errorf("revoke: %+v", revoke)
	}

	for _, a := range []wasim.Attachment{
		{Kind: "image", Data: []byte("jpeg bytes"), MimeType: "image/jpeg", Caption: "look"},
		{Kind: "video", Data: []byte("mp4 bytes"), MimeType: "video/mp4", Caption: "watch"},
		{Kind: "audio", Data: []byte("ogg bytes"), MimeType: "audio/ogg; codecs=opus", PTT: true},
		{Kind: "audio", Data: []byte("mp3 bytes"), MimeType: "audio/mpeg"},
		{Kind: "document", Data: []byte("%PDF"), MimeType: "application/pdf", FileName: "cv.pdf", Caption: "cv"},
		{Kind: "sticker", Data: []byte("webp bytes"), MimeType: "image/webp"},
	} {
		id, err := alice.SendMedia(ctx, to, a)
		if err != nil {
			t.Fatal(err)
		}
		in := waitIncoming(t, r, id)
		sum := sha256.Sum256(a.Data)
		want := bridge.Media{MimeType: a.MimeType, Size: uint64(len(a.Data)), FileName: a.FileName, SHA256: hex.EncodeToString(sum[:]), PTT: a.PTT}
		if in.Type != a.Kind || in.Text != a.Caption || !sameMedia(in.Media, &want) || len(in.Media.Source) == 0 {
			t.Errorf("%s: %+v %+v", a.Kind, in, in.Media)
		}
	}
}
