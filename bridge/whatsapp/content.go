package whatsapp

import (
	"context"
	"fmt"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge"
)

// QuoteSource finds the message a reply quotes (the message log, for what
// the bridge sent): its sender and text. false when it does not know it.
type QuoteSource interface {
	Quoted(ctx context.Context, chat bridge.Recipient, whatsappID string) (bridge.Quoted, bool, error)
}

// mediaKinds are the upload kinds of the attachment types: each encrypts
// with its own key derivation, which the recipient must match.
var mediaKinds = map[bridge.MessageType]whatsmeow.MediaType{
	bridge.TypeImage:    whatsmeow.MediaImage,
	bridge.TypeDocument: whatsmeow.MediaDocument,
	bridge.TypeVideo:    whatsmeow.MediaVideo,
	bridge.TypeAudio:    whatsmeow.MediaAudio,
}

// mediaMessage is the message pointing at an uploaded attachment.
func mediaMessage(out bridge.Outgoing, up whatsmeow.UploadResponse) *waE2E.Message {
	url, path, size := proto.String(up.URL), proto.String(up.DirectPath), proto.Uint64(up.FileLength)
	mimeType, caption := proto.String(out.MimeType), optional(out.Text)
	switch out.Type {
	case bridge.TypeImage:
		return &waE2E.Message{ImageMessage: &waE2E.ImageMessage{URL: url, DirectPath: path, MediaKey: up.MediaKey,
			Mimetype: mimeType, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: size, Caption: caption}}
	case bridge.TypeVideo:
		return &waE2E.Message{VideoMessage: &waE2E.VideoMessage{URL: url, DirectPath: path, MediaKey: up.MediaKey,
			Mimetype: mimeType, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: size, Caption: caption}}
	case bridge.TypeAudio:
		return &waE2E.Message{AudioMessage: &waE2E.AudioMessage{URL: url, DirectPath: path, MediaKey: up.MediaKey,
			Mimetype: mimeType, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: size,
			PTT: proto.Bool(out.PTT)}}
	default:
		return &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{URL: url, DirectPath: path, MediaKey: up.MediaKey,
			Mimetype: mimeType, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: size,
			FileName: proto.String(out.FileName), Title: proto.String(out.FileName), Caption: caption}}
	}
}

func locationMessage(out bridge.Outgoing) (*waE2E.Message, error) {
	l := out.Location
	if l == nil {
		return nil, bridge.Invalid(bridge.PartLocation.MissingCode(), "a location message needs its place")
	}
	return &waE2E.Message{LocationMessage: &waE2E.LocationMessage{
		DegreesLatitude: proto.Float64(l.Latitude), DegreesLongitude: proto.Float64(l.Longitude),
		Name: optional(l.Name), Address: optional(l.Address),
	}}, nil
}

func contactMessage(out bridge.Outgoing) (*waE2E.Message, error) {
	c := out.Contact
	if c == nil {
		return nil, bridge.Invalid(bridge.PartContact.MissingCode(), "a contact message needs its card")
	}
	return &waE2E.Message{ContactMessage: &waE2E.ContactMessage{
		DisplayName: proto.String(c.DisplayName), Vcard: proto.String(c.VCard),
	}}, nil
}

// pollMessage is a poll with a fresh secret: whatsmeow's SendMessage
// keeps the secret in the session's store (whatsmeow_message_secrets),
// which is what decrypts the votes, across restarts too.
func pollMessage(cli *whatsmeow.Client, out bridge.Outgoing) (*waE2E.Message, error) {
	p := out.Poll
	if p == nil {
		return nil, bridge.Invalid(bridge.PartPoll.MissingCode(), "a poll message needs its question and options")
	}
	return cli.BuildPollCreation(p.Question, p.Options, p.Selectable), nil
}

// contextInfo is the reply and mentions of out, as WhatsApp clients send
// them; nil when it has neither.
func (m *Session) contextInfo(ctx context.Context, cli *whatsmeow.Client, out bridge.Outgoing) (*waE2E.ContextInfo, error) {
	if out.ReplyTo == "" && len(out.Mentions) == 0 {
		return nil, nil
	}
	info := &waE2E.ContextInfo{}
	for _, r := range out.Mentions {
		info.MentionedJID = append(info.MentionedJID, r.JID())
	}
	if out.ReplyTo == "" {
		return info, nil
	}
	info.StanzaID = proto.String(out.ReplyTo)
	// Phones show the quote from QuotedMessage; an empty one (as WhatsApp
	// Web sends for a message it no longer has) still links the reply.
	info.QuotedMessage = &waE2E.Message{Conversation: proto.String("")}
	quoted, known := bridge.Quoted{}, false
	if m.opts.Quotes != nil {
		var err error
		if quoted, known, err = m.opts.Quotes.Quoted(ctx, out.Recipient, out.ReplyTo); err != nil {
			return nil, fmt.Errorf("find the quoted message: %w", err)
		}
	}
	switch {
	case known && quoted.Sender.IsZero():
		info.Participant = proto.String(ownJID(cli).String())
		info.QuotedMessage = quotedMessage(quoted)
	case known:
		info.Participant = proto.String(quoted.Sender.JID())
		info.QuotedMessage = quotedMessage(quoted)
	case out.Recipient.Kind != bridge.RecipientGroup:
		// Unknown in a chat of two: the other one wrote it.
		info.Participant = proto.String(out.Recipient.JID())
	}
	return info, nil
}

// quotedMessage is the quoted message as the reply carries it: a photo,
// video, voice note or document as its kind (the phone shows "Photo" and
// its caption), anything else as its text.
func quotedMessage(q bridge.Quoted) *waE2E.Message {
	caption, mimeType := optional(q.Text), optional(q.MimeType)
	switch q.Type {
	case string(bridge.TypeImage):
		return &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: caption, Mimetype: mimeType}}
	case string(bridge.TypeVideo):
		return &waE2E.Message{VideoMessage: &waE2E.VideoMessage{Caption: caption, Mimetype: mimeType}}
	case string(bridge.TypeAudio):
		return &waE2E.Message{AudioMessage: &waE2E.AudioMessage{Mimetype: mimeType}}
	case string(bridge.TypeDocument):
		return &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{Caption: caption, Mimetype: mimeType}}
	}
	return &waE2E.Message{Conversation: proto.String(q.Text)}
}

// ownJID is the linked account's user JID, without the device.
func ownJID(cli *whatsmeow.Client) types.JID {
	if id := cli.Store.GetJID(); !id.IsEmpty() {
		return id.ToNonAD()
	}
	return types.EmptyJID
}

// withContext puts info on msg's content. A plain text cannot carry it and
// becomes an extended text, as WhatsApp clients send replies.
func withContext(msg *waE2E.Message, info *waE2E.ContextInfo) *waE2E.Message {
	switch {
	case msg.Conversation != nil:
		return &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: msg.Conversation, ContextInfo: info}}
	case msg.ImageMessage != nil:
		msg.ImageMessage.ContextInfo = info
	case msg.VideoMessage != nil:
		msg.VideoMessage.ContextInfo = info
	case msg.AudioMessage != nil:
		msg.AudioMessage.ContextInfo = info
	case msg.DocumentMessage != nil:
		msg.DocumentMessage.ContextInfo = info
	case msg.LocationMessage != nil:
		msg.LocationMessage.ContextInfo = info
	case msg.ContactMessage != nil:
		msg.ContactMessage.ContextInfo = info
	case msg.PollCreationMessage != nil:
		msg.PollCreationMessage.ContextInfo = info
	case msg.InteractiveMessage != nil:
		msg.InteractiveMessage.ContextInfo = info
	}
	return msg
}
