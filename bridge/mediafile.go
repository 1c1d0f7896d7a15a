package bridge

import (
	"io"
	"time"
)

// MediaFile is a stored incoming attachment, open for reading.
type MediaFile struct {
	ID       string
	MimeType string // as the sender announced it
	FileName string // a document's name; empty for other media
	SHA256   string // hex, of the decrypted file
	// ReceivedAt is when the message that carried it was stored.
	ReceivedAt time.Time
	// Content is the decrypted file; the caller closes it.
	Content io.ReadSeekCloser
}

// The answers of GET /api/media/{id} that are not the file. An expired
// attachment answers 404 like an unknown one (its code tells them apart):
// either way the bridge no longer has it.
var (
	ErrMediaNotFound = &Error{Kind: KindNotFound, Code: CodeMediaNotFound, Message: "no media with this id"}
	ErrMediaExpired  = &Error{Kind: KindNotFound, Code: CodeMediaExpired,
		Message: "the media is older than MEDIA_RETENTION and was deleted"}
	ErrMediaDownloadFailed = &Error{Kind: KindUpstream, Code: CodeMediaDownloadFailed,
		Message: "the media could not be downloaded from WhatsApp"}
	ErrMediaPending = &Error{Kind: KindTimeout, Code: CodeMediaPending,
		Message: "the media is still being downloaded; ask again later"}
	ErrMediaCorrupt = &Error{Kind: KindInternal, Code: CodeMediaCorrupt,
		Message: "the stored file is damaged and was not served"}
)
