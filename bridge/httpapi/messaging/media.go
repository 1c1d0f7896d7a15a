package messaging

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// MediaFiles are the incoming attachments (media.Downloader): Open checks
// the id, waits a bounded time for a download not yet done, and answers
// the decrypted file or a bridge error.
type MediaFiles interface {
	Open(ctx context.Context, id string) (*bridge.MediaFile, error)
}

// mediaRetryAfter is the Retry-After of media_pending, in seconds.
const mediaRetryAfter = "10"

// getMedia serves GET /api/media/{id}: the decrypted file with its type,
// name and length, and Range requests (http.ServeContent).
func (s *server) getMedia(w http.ResponseWriter, r *http.Request) error {
	if s.Media == nil {
		return bridge.ErrMediaNotFound
	}
	f, err := s.Media.Open(r.Context(), mux.Vars(r)["id"])
	if errors.Is(err, bridge.ErrMediaPending) {
		w.Header().Set("Retry-After", mediaRetryAfter)
	}
	if err != nil {
		return err
	}
	defer func() { _ = f.Content.Close() }()
	h := w.Header()
	h.Set("Content-Type", contentType(f.MimeType))
	h.Set("Content-Disposition", attachmentDisposition(f.FileName, f.ID, f.MimeType))
	// The sender chose the type: the file is never run as a page of the
	// bridge's origin, whatever it claims to be.
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("Cache-Control", "private")
	if f.SHA256 != "" {
		h.Set("ETag", `"`+f.SHA256+`"`) // the content's own hash: If-None-Match and If-Range work
	}
	// ServeContent answers ranges, conditionals and HEAD; a chunk that fails
	// to authenticate mid-body ends the response short, never with bytes
	// that were changed.
	http.ServeContent(&rangeErrorWriter{ResponseWriter: w}, r, "", f.ReceivedAt, f.Content)
	return nil
}

// rangeErrorWriter answers ServeContent's 416 (a range outside the file)
// in the error shape, code range_not_satisfiable, keeping its
// Content-Range: ServeContent writes it as plain text (http.Error).
type rangeErrorWriter struct {
	http.ResponseWriter
	refused, answered bool
}

func (w *rangeErrorWriter) WriteHeader(status int) {
	if status != http.StatusRequestedRangeNotSatisfiable {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.refused = true
}

// Write writes the error shape in place of ServeContent's text, once.
func (w *rangeErrorWriter) Write(p []byte) (int, error) {
	if !w.refused {
		return w.ResponseWriter.Write(p)
	}
	if !w.answered {
		w.answered = true
		httpkit.WriteErrorBody(w.ResponseWriter, http.StatusRequestedRangeNotSatisfiable, bridge.CodeRangeNotSatisfiable,
			strings.TrimSpace(string(p))+"; the file has "+strings.TrimPrefix(w.Header().Get("Content-Range"), "bytes */")+" bytes")
	}
	return len(p), nil
}

// Unwrap lets http.ResponseController reach the connection.
func (w *rangeErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// contentType is the sender's MIME type when it parses, else
// application/octet-stream.
func contentType(announced string) string {
	mt, params, err := mime.ParseMediaType(announced)
	if err != nil {
		return "application/octet-stream"
	}
	if out := mime.FormatMediaType(mt, params); out != "" {
		return out
	}
	return "application/octet-stream"
}

// attachmentDisposition names the download: the sender's file name without
// any folder (RFC 6266, non-ASCII as RFC 5987 filename*), else the id with
// the extension of its type (a photo, video or voice note has no name, and
// a saved file without an extension opens nowhere).
func attachmentDisposition(fileName, id, mimeType string) string {
	name := path.Base(strings.ReplaceAll(fileName, `\`, "/"))
	if name == "." || name == "/" || name == ".." {
		name = id + extensionOf(mimeType)
	}
	if v := mime.FormatMediaType("attachment", map[string]string{"filename": name}); v != "" {
		return v
	}
	return mime.FormatMediaType("attachment", map[string]string{"filename": id + extensionOf(mimeType)})
}

// mediaExtensions are the usual extensions of what WhatsApp carries; the
// system's table (mime.ExtensionsByType) differs between machines and
// lists .jfif before .jpg.
var mediaExtensions = map[string]string{
	"image/jpeg": ".jpg", "image/png": ".png", "image/webp": ".webp", "image/gif": ".gif",
	"video/mp4": ".mp4", "video/3gpp": ".3gp",
	"audio/ogg": ".ogg", "audio/mpeg": ".mp3", "audio/mp4": ".m4a", "audio/aac": ".aac", "audio/amr": ".amr",
	"application/pdf": ".pdf", "text/vcard": ".vcf",
}

// extensionOf is the extension of a media type ("audio/ogg; codecs=opus"
// is .ogg); "" when unknown.
func extensionOf(mimeType string) string {
	mt, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		return ""
	}
	return mediaExtensions[mt]
}
