package cloudapi

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// mediaObject is Graph's media object; url is where the same bearer token
// fetches the bytes from the bridge.
type mediaObject struct {
	MessagingProduct string `json:"messaging_product"`
	URL              string `json:"url"`
	MimeType         string `json:"mime_type"`
	SHA256           string `json:"sha256"`
	FileSize         int64  `json:"file_size"`
	ID               string `json:"id"`
}

// postMedia is POST /{version}/{phone_number_id}/media: the multipart's
// file part streams into a new upload, as POST /api/uploads's does
// (spooled, sniffed, bounded by MAX_FILE_SIZE); the upload's id is the
// media id.
func (d *Door) postMedia(w http.ResponseWriter, r *http.Request) error {
	if err := d.checkPhone(r, mux.Vars(r)["phone"]); err != nil {
		return err
	}
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return invalidParam("unsupported_media_type", "the body must be multipart/form-data with a file part")
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	product := ""
	for {
		part, err := mr.NextPart()
		if err != nil {
			return invalidParam("missing_file", "the body needs a part named file")
		}
		switch part.FormName() {
		case "messaging_product":
			b, _ := io.ReadAll(io.LimitReader(part, 64))
			product = string(b)
			continue
		case "file":
		default:
			continue // type and the like: the file's content decides its type
		}
		if product != "" && product != "whatsapp" {
			return invalidParam("missing_messaging_product", `messaging_product must be "whatsapp"`)
		}
		id, err := d.upload(r, part, part.FileName())
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]string{"id": id})
		return nil
	}
}

// upload streams content into a new upload and returns its id. The file's
// type is what its content is, whatever the part's header says.
func (d *Door) upload(r *http.Request, content io.Reader, name string) (string, error) {
	if d.cfg.Uploads == nil {
		return "", errNoUploads
	}
	f, err := d.spoolFile(content, name)
	if err != nil {
		return "", err
	}
	up, err := d.cfg.Uploads.Add(r.Context(), f)
	if err != nil {
		return "", err
	}
	return up.ID, nil
}

// spoolFile writes content into the spool as the bridge's own API writes
// an upload: sniffed, hashed, refused while streaming when over
// MAX_FILE_SIZE or SPOOL_MAX_BYTES; on error nothing stays.
func (d *Door) spoolFile(content io.Reader, name string) (*spool.File, error) {
	if d.cfg.Space == nil {
		return nil, errNoUploads
	}
	f, err := d.cfg.Space.Write(content, spool.CleanFileName(name), d.cfg.MaxFileSize)
	if re, ok := errors.AsType[*spool.ReadError](err); ok {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](re.Err); tooLarge {
			return nil, bridge.Errorf(bridge.KindTooLarge, bridge.CodeBodyTooLarge, "the body is larger than any valid request")
		}
		return nil, invalidParam(bridge.CodeInvalidForm, "the file could not be read: "+re.Err.Error())
	}
	return f, err
}

// deleteMedia is DELETE /{version}/{media_id}: an uploaded file is
// forgotten.
func (d *Door) deleteMedia(w http.ResponseWriter, r *http.Request) error {
	id := mux.Vars(r)["id"]
	if d.cfg.Uploads == nil {
		return errNoUploads
	}
	if _, err := sendqueue.ParseMessageID(id); err != nil {
		return noObject(id)
	}
	if err := d.cfg.Uploads.Delete(r.Context(), id); err != nil {
		if bridge.ErrorKind(err) == bridge.KindNotFound {
			return noObject(id)
		}
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}

// getMedia answers the media object of an upload or an incoming
// attachment.
func (d *Door) getMedia(w http.ResponseWriter, r *http.Request, id string) error {
	f, err := d.openMedia(r, id)
	if err != nil {
		return err
	}
	defer f.content.Close()
	base := baseURL(r)
	prefix := ""
	if v := mux.Vars(r)["version"]; v != "" {
		prefix = "/" + v
	}
	writeJSON(w, http.StatusOK, mediaObject{MessagingProduct: "whatsapp", ID: id, MimeType: f.mimeType, SHA256: f.sha256,
		FileSize: f.size, URL: base + prefix + "/" + id + "/file"})
	return nil
}

// baseURL is the scheme and host r came to.
func baseURL(r *http.Request) string {
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// mediaBytes serves a media object's url: the file, with the same bearer
// token.
func (d *Door) mediaBytes(w http.ResponseWriter, r *http.Request) error {
	f, err := d.openMedia(r, mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	defer f.content.Close()
	h := w.Header()
	h.Set("Content-Type", f.mimeType)
	h.Set("Content-Length", strconv.FormatInt(f.size, 10))
	// The sender chose the type and the bytes: the file is only ever
	// downloaded, never run as a page of the bridge's origin (as
	// GET /api/media/{id} serves it).
	h.Set("Content-Disposition", attachment(f.name))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("Cache-Control", "private")
	_, _ = io.Copy(w, f.content) // a client that left mid-file is no fault of the bridge
	return nil
}

// attachment is the Content-Disposition of a file named name: always an
// attachment, named when it has a name.
func attachment(name string) string {
	if name == "" {
		return "attachment"
	}
	if v := mime.FormatMediaType("attachment", map[string]string{"filename": name}); v != "" {
		return v
	}
	return "attachment"
}

// openedMedia is an upload's or an incoming attachment's file.
type openedMedia struct {
	mimeType, sha256, name string
	size                   int64
	content                io.ReadSeekCloser
}

// openMedia opens media id: an upload, else an incoming attachment.
func (d *Door) openMedia(r *http.Request, id string) (openedMedia, error) {
	if d.cfg.Uploads != nil {
		up, content, err := d.cfg.Uploads.Open(r.Context(), id)
		if err == nil {
			return openedMedia{mimeType: up.MimeType, sha256: up.SHA256, name: up.FileName, size: up.Size, content: content}, nil
		}
		if bridge.ErrorKind(err) != bridge.KindNotFound && bridge.ErrorKind(err) != bridge.KindInvalid {
			return openedMedia{}, err
		}
	}
	if d.cfg.Media == nil || !strings.HasPrefix(id, "med_") {
		return openedMedia{}, noObject(id)
	}
	f, err := d.cfg.Media.Open(r.Context(), id)
	if err != nil {
		if bridge.ErrorKind(err) == bridge.KindNotFound || bridge.ErrorKind(err) == bridge.KindInvalid {
			return openedMedia{}, noObject(id)
		}
		return openedMedia{}, err
	}
	size, err := f.Content.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = f.Content.Seek(0, io.SeekStart)
	}
	if err != nil {
		_ = f.Content.Close()
		return openedMedia{}, bridge.Internal(bridge.CodeReadFailed, "the media could not be read", err)
	}
	return openedMedia{mimeType: f.MimeType, sha256: f.SHA256, name: f.FileName, size: size, content: f.Content}, nil
}
