package whatsapp

import (
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge"
)

// downloadable is what every attachment message of whatsmeow offers.
type downloadable interface {
	GetMimetype() string
	GetFileLength() uint64
	GetFileSHA256() []byte
	GetContextInfo() *waE2E.ContextInfo
}

// attachment fills in's type, caption and media from an image, video,
// audio, document or sticker message; false for anything else. The media's
// Source is the attachment alone, marshalled, from which Download fetches
// it later.
func attachment(msg *waE2E.Message, in *bridge.Incoming) (*waE2E.ContextInfo, bool) {
	var m downloadable
	var only waE2E.Message
	switch {
	case msg.ImageMessage != nil:
		m, in.Type, in.Text = msg.GetImageMessage(), "image", msg.GetImageMessage().GetCaption()
		only.ImageMessage = msg.GetImageMessage()
	case msg.VideoMessage != nil:
		m, in.Type, in.Text = msg.GetVideoMessage(), "video", msg.GetVideoMessage().GetCaption()
		only.VideoMessage = msg.GetVideoMessage()
	case msg.AudioMessage != nil:
		m, in.Type = msg.GetAudioMessage(), "audio"
		only.AudioMessage = msg.GetAudioMessage()
	case msg.DocumentMessage != nil:
		m, in.Type, in.Text = msg.GetDocumentMessage(), "document", msg.GetDocumentMessage().GetCaption()
		only.DocumentMessage = msg.GetDocumentMessage()
	case msg.StickerMessage != nil:
		m, in.Type = msg.GetStickerMessage(), "sticker"
		only.StickerMessage = msg.GetStickerMessage()
	default:
		return nil, false
	}
	source, _ := proto.Marshal(&only) // a message that was just unmarshalled marshals
	in.Media = &bridge.Media{
		MimeType: m.GetMimetype(), Size: m.GetFileLength(), SHA256: hexSum(m.GetFileSHA256()),
		FileName: msg.GetDocumentMessage().GetFileName(), PTT: msg.GetAudioMessage().GetPTT(), Source: source,
	}
	return m.GetContextInfo(), true
}

// caption is an attachment's caption.
func caption(msg *waE2E.Message) string {
	switch {
	case msg.GetImageMessage() != nil:
		return msg.GetImageMessage().GetCaption()
	case msg.GetVideoMessage() != nil:
		return msg.GetVideoMessage().GetCaption()
	case msg.GetDocumentMessage() != nil:
		return msg.GetDocumentMessage().GetCaption()
	}
	return ""
}
