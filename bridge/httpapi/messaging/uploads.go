package messaging

import (
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// Uploads is what the API needs of the upload store (*spool.Uploads).
type Uploads interface {
	Add(ctx context.Context, f *spool.File) (spool.Upload, error)
	Use(ctx context.Context, id string) (*sendqueue.SpooledFile, error)
	// Delete forgets an upload before its time (spool.ErrUploadNotFound
	// when none is kept under id).
	Delete(ctx context.Context, id string) error
}

type UploadJSON struct {
	UploadID  string    `json:"upload_id"`
	FileName  string    `json:"file_name"`
	MimeType  string    `json:"mimetype"`
	Size      int64     `json:"size"`
	SHA256    string    `json:"sha256"`
	ExpiresAt time.Time `json:"expires_at"`
}

// postUpload is POST /api/uploads: one multipart part named file, streamed
// to the spool as POST /send's files are (sniffed, hashed, refused with
// 413 while streaming when over MAX_FILE_SIZE), kept for UPLOAD_RETENTION (24 hours by default).
func (s *server) postUpload(w http.ResponseWriter, r *http.Request) error {
	if s.Uploads == nil {
		return errNoUploads
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.Send.MaxFileSize+64<<10)
	f, err := s.readUpload(r)
	if err != nil {
		w.Header().Set("Connection", "close") // the rest of the body stays unread
		return err
	}
	up, err := s.Uploads.Add(r.Context(), f)
	if err != nil {
		return err
	}
	return httpkit.WriteJSON(w, http.StatusCreated, UploadJSON{UploadID: up.ID, FileName: up.FileName, MimeType: up.MimeType,
		Size: up.Size, SHA256: up.SHA256, ExpiresAt: up.ExpiresAt.UTC()})
}

// deleteUpload is DELETE /api/uploads/{id}: the upload is forgotten and
// its file deleted (unless another upload has the same content), so that
// the spool's room comes back before UPLOAD_RETENTION ends.
func (s *server) deleteUpload(w http.ResponseWriter, r *http.Request) error {
	if s.Uploads == nil {
		return errNoUploads
	}
	id, err := parseMessageID(mux.Vars(r)["id"])
	if err != nil {
		return spool.ErrUploadNotFound
	}
	if err := s.Uploads.Delete(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// readUpload spools the body's one file part; on error nothing stays.
func (s *server) readUpload(r *http.Request) (*sendqueue.SpooledFile, error) {
	mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/form-data" {
		return nil, bridge.Errorf(bridge.KindUnsupported, bridge.CodeUnsupportedMediaType, "the body must be multipart/form-data")
	}
	if params["boundary"] == "" {
		return nil, bridge.Invalid(bridge.CodeInvalidForm, "multipart/form-data needs a boundary")
	}
	tail := &tailReader{r: r.Body}
	mr := multipart.NewReader(tail, params["boundary"])
	var f *sendqueue.SpooledFile
	for {
		part, err := mr.NextPart()
		if err == io.EOF { //nolint:errorlint // only a bare io.EOF is the clean end
			return f, s.uploadEnd(f, tail.closedBy(params["boundary"]))
		}
		if err == nil {
			err = s.uploadPart(part, &f)
		} else {
			err = readFailed(err)
		}
		if err != nil {
			f.Discard()
			return nil, err
		}
	}
}

// uploadPart spools the file part into *f; any other part is refused.
func (s *server) uploadPart(part *multipart.Part, f **sendqueue.SpooledFile) error {
	switch name := part.FormName(); {
	case name != "file":
		return bridge.Invalid(bridge.CodeUnknownField, "unknown field %q; the one field is file", bridge.Truncate(name, 64))
	case *f != nil:
		return bridge.Invalid(bridge.CodeUnexpectedFile, "one upload takes one file")
	}
	sf, err := spoolPart(s.space, part, s.Send.MaxFileSize)
	*f = sf // owned from here, even on error
	return err
}

func (s *server) uploadEnd(f *sendqueue.SpooledFile, closed bool) error {
	switch {
	case !closed:
		f.Discard()
		return bridge.Invalid(bridge.CodeInvalidForm, "the multipart body ends without its closing boundary")
	case f == nil:
		return bridge.Invalid(bridge.CodeMissingFile, "the body needs a part named file")
	}
	return nil
}
