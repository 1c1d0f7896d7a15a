package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge"
)

// File is where Download writes an attachment: whatsmeow writes the
// encrypted download into it, checks it, then decrypts it in place, so it
// must read and write at any offset (media.Scratch is one, encrypted with a
// key only the process has).
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
func (m *Session) Download(ctx context.Context, source []byte, dst File) error {
	var msg waE2E.Message
	if err := proto.Unmarshal(source, &msg); err != nil {
		return bridge.Invalid(bridge.CodeInvalidMediaSource, "the stored media source does not decode: %v", err)
	}
	d := downloadableOf(&msg)
	if d == nil {
		return bridge.Invalid(bridge.CodeInvalidMediaSource, "the stored media source holds no attachment")
	}
	cli := m.client.Load()
	if !cli.IsLoggedIn() {
		return bridge.ErrNotLinked
	}
	if err := cli.DownloadToFile(ctx, d, dst); err != nil {
		if slices.ContainsFunc(finalDownloadErrors, func(final error) bool { return errors.Is(err, final) }) {
			return &bridge.Error{Kind: bridge.KindUpstream, Code: bridge.ErrMediaDownloadFailed.Code,
				Message: "WhatsApp no longer has the file, or it does not verify", Err: err}
		}
		return fmt.Errorf("download media: %w", err)
	}
	return nil
}

// finalDownloadErrors are whatsmeow's answers that another attempt cannot
// change: the media servers no longer have the file (WhatsApp keeps it for
// a limited time) or refuse it, or what they sent does not verify. Any
// other error (network, 5xx) may pass.
var finalDownloadErrors = []error{
	whatsmeow.ErrMediaDownloadFailedWith403, whatsmeow.ErrMediaDownloadFailedWith404,
	whatsmeow.ErrMediaDownloadFailedWith410, whatsmeow.ErrNoURLPresent,
	whatsmeow.ErrTooShortFile, whatsmeow.ErrInvalidMediaHMAC, whatsmeow.ErrInvalidMediaEncSHA256,
	whatsmeow.ErrInvalidMediaSHA256, whatsmeow.ErrUnknownMediaType,
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
