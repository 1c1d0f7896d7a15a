package whatsapp

import (
	"context"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// incoming maps a received message to what message.upsert reports; ok is
// false for what is not a message a person wrote: our own messages, protocol
// messages (revokes, key shares) and messages whose only content is
// something else, such as the SenderKeyDistributionMessage that precedes a
// sender's first group message.
func incoming(ctx context.Context, cli *whatsmeow.Client, e *events.Message) (webhook.Incoming, bool) {
	if e.Info.IsFromMe || e.Message == nil || e.Message.GetProtocolMessage() != nil {
		return webhook.Incoming{}, false
	}
	in := webhook.Incoming{
		WhatsAppID: e.Info.ID, PushName: e.Info.PushName, Timestamp: e.Info.Timestamp,
		From: phoneOf(ctx, cli, e.Info.Sender, e.Info.SenderAlt),
		Chat: phoneOf(ctx, cli, e.Info.Chat, types.EmptyJID),
	}
	if !content(e.Message, &in) {
		return webhook.Incoming{}, false
	}
	return in, true
}

// content fills in's type, text and media from msg; false when msg holds
// nothing message.upsert reports.
func content(msg *waE2E.Message, in *webhook.Incoming) bool {
	switch {
	case msg.Conversation != nil:
		in.Type, in.Text = "text", msg.GetConversation()
	case msg.ExtendedTextMessage != nil:
		in.Type, in.Text = "text", msg.GetExtendedTextMessage().GetText()
	case msg.ImageMessage != nil:
		m := msg.GetImageMessage()
		in.Type, in.Text = "image", m.GetCaption()
		in.Media = &webhook.Media{MimeType: m.GetMimetype(), Size: m.GetFileLength()}
	case msg.DocumentMessage != nil:
		m := msg.GetDocumentMessage()
		in.Type, in.Text = "document", m.GetCaption()
		in.Media = &webhook.Media{MimeType: m.GetMimetype(), Size: m.GetFileLength(), FileName: m.GetFileName()}
	case msg.VideoMessage != nil:
		m := msg.GetVideoMessage()
		in.Type, in.Text = "video", m.GetCaption()
		in.Media = &webhook.Media{MimeType: m.GetMimetype(), Size: m.GetFileLength()}
	case msg.AudioMessage != nil:
		m := msg.GetAudioMessage()
		in.Type = "audio"
		in.Media = &webhook.Media{MimeType: m.GetMimetype(), Size: m.GetFileLength()}
	case msg.StickerMessage != nil:
		m := msg.GetStickerMessage()
		in.Type = "sticker"
		in.Media = &webhook.Media{MimeType: m.GetMimetype(), Size: m.GetFileLength()}
	default:
		return false
	}
	return true
}

// phoneOf is the phone number of a user JID, mapping a hidden (@lid) one
// through alt or the store's LID map; a group (or an unmappable LID) is
// reported as its full JID.
func phoneOf(ctx context.Context, cli *whatsmeow.Client, jid, alt types.JID) string {
	jid = jid.ToNonAD()
	switch jid.Server {
	case types.DefaultUserServer:
		return jid.User
	case types.HiddenUserServer:
		if alt.Server == types.DefaultUserServer {
			return alt.User
		}
		if pn, err := cli.Store.LIDs.GetPNForLID(ctx, jid); err == nil && !pn.IsEmpty() {
			return pn.User
		}
	}
	return jid.String()
}
