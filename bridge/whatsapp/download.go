package whatsapp

import (
	"context"
	"fmt"
	"io"
	"os"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge"
)

// File is where Download writes an attachment: whatsmeow writes the
// encrypted download into it, checks it, then decrypts it in place, so it
// must read and write at any offset (media.Sealed is one, encrypted at
// rest).
type File interface {
	io.Reader
	io.Writer
	io.Seeker
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
}

// Download fetches the attachment an Incoming's Media.Source names into
// dst, checking its MAC and SHA-256; it streams, never holding the file in
// memory. It needs a logged-in session (the media servers want its
// credentials).
func (m *Manager) Download(ctx context.Context, source []byte, dst File) error {
	var msg waE2E.Message
	if err := proto.Unmarshal(source, &msg); err != nil {
		return bridge.Invalid("invalid_media_source", "the stored media source does not decode: %v", err)
	}
	d := downloadableOf(&msg)
	if d == nil {
		return bridge.Invalid("invalid_media_source", "the stored media source holds no attachment")
	}
	cli := m.client.Load()
	if !cli.IsLoggedIn() {
		return bridge.ErrNotLinked
	}
	if err := cli.DownloadToFile(ctx, d, dst); err != nil {
		return fmt.Errorf("download media: %w", err)
	}
	return nil
}

// downloadableOf is the attachment of msg, or nil.
func downloadableOf(msg *waE2E.Message) whatsmeow.DownloadableMessage {
	switch {
	case msg.ImageMessage != nil:
		return msg.ImageMessage
	case msg.VideoMessage != nil:
		return msg.VideoMessage
	case msg.AudioMessage != nil:
		return msg.AudioMessage
	case msg.DocumentMessage != nil:
		return msg.DocumentMessage
	case msg.StickerMessage != nil:
		return msg.StickerMessage
	}
	return nil
}
