package whatsapp

import (
	"context"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
)

// incoming maps a received message to what message.upsert reports; ok is
// false for what is not a message a person wrote: our own messages, protocol
// messages (revokes, key shares) and messages whose only content is
// something else, such as the SenderKeyDistributionMessage that precedes a
// sender's first group message. So is a message whose sender or chat is no
// bridge.Recipient (a status broadcast, a newsletter).
func incoming(ctx context.Context, cli *whatsmeow.Client, e *events.Message) (bridge.Incoming, bool) {
	if e.Info.IsFromMe || e.Message == nil || e.Message.GetProtocolMessage() != nil {
		return bridge.Incoming{}, false
	}
	from, okFrom := recipientOf(ctx, cli, e.Info.Sender, e.Info.SenderAlt)
	chat, okChat := recipientOf(ctx, cli, e.Info.Chat, types.EmptyJID)
	in := bridge.Incoming{
		WhatsAppID: e.Info.ID, PushName: e.Info.PushName, Timestamp: e.Info.Timestamp, From: from, Chat: chat,
	}
	if !okFrom || !okChat || !content(e.Message, &in) {
		return bridge.Incoming{}, false
	}
	return in, true
}

// content fills in's type, text and media from msg; false when msg holds
// nothing message.upsert reports.
func content(msg *waE2E.Message, in *bridge.Incoming) bool {
	switch {
	case msg.Conversation != nil:
		in.Type, in.Text = "text", msg.GetConversation()
	case msg.ExtendedTextMessage != nil:
		in.Type, in.Text = "text", msg.GetExtendedTextMessage().GetText()
	case msg.ImageMessage != nil:
		m := msg.GetImageMessage()
		in.Type, in.Text = "image", m.GetCaption()
		in.Media = &bridge.Media{MimeType: m.GetMimetype(), Size: m.GetFileLength()}
	case msg.DocumentMessage != nil:
		m := msg.GetDocumentMessage()
		in.Type, in.Text = "document", m.GetCaption()
		in.Media = &bridge.Media{MimeType: m.GetMimetype(), Size: m.GetFileLength(), FileName: m.GetFileName()}
	case msg.VideoMessage != nil:
		m := msg.GetVideoMessage()
		in.Type, in.Text = "video", m.GetCaption()
		in.Media = &bridge.Media{MimeType: m.GetMimetype(), Size: m.GetFileLength()}
	case msg.AudioMessage != nil:
		m := msg.GetAudioMessage()
		in.Type = "audio"
		in.Media = &bridge.Media{MimeType: m.GetMimetype(), Size: m.GetFileLength()}
	case msg.StickerMessage != nil:
		m := msg.GetStickerMessage()
		in.Type = "sticker"
		in.Media = &bridge.Media{MimeType: m.GetMimetype(), Size: m.GetFileLength()}
	default:
		return false
	}
	return true
}

// recipientOf is the recipient of a user or group JID, mapping a hidden
// (@lid) user to a phone number through alt or the store's LID map; an
// unmappable LID stays a LID.
func recipientOf(ctx context.Context, cli *whatsmeow.Client, jid, alt types.JID) (bridge.Recipient, bool) {
	jid = jid.ToNonAD()
	if jid.Server == types.HiddenUserServer {
		if alt.Server == types.DefaultUserServer {
			jid = alt
		} else if pn, err := cli.Store.LIDs.GetPNForLID(ctx, jid); err == nil && !pn.IsEmpty() {
			jid = pn
		}
	}
	r, err := bridge.RecipientFromJID(jid.String())
	return r, err == nil
}
