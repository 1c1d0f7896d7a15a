package cloudapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
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
// file part streams into the bridge's own POST /api/uploads (spooled,
// sniffed, bounded by MAX_FILE_SIZE); the upload's id is the media id.
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
		id, err := d.upload(r, part, part.FileName(), part.Header.Get("Content-Type"))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]string{"id": id})
		return nil
	}
}

// upload streams content into a new upload of the bridge's own API and
// returns its id.
func (d *Door) upload(r *http.Request, content io.Reader, name, contentType string) (string, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	written := make(chan struct{})
	go func() {
		defer close(written)
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "file", "filename": name}))
		if contentType != "" {
			h.Set("Content-Type", contentType)
		}
		part, err := mw.CreatePart(h)
		if err == nil {
			_, err = io.Copy(part, content)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	a, err := d.call(r, http.MethodPost, "/api/uploads", pr, mw.FormDataContentType())
	_ = pr.CloseWithError(errors.New("upload answered")) // ends the writer when the API stopped reading
	<-written                                            // content (a request's body) is read no more once this returns
	if err != nil {
		return "", err
	}
	var up struct {
		UploadID string `json:"upload_id"`
	}
	if err := json.Unmarshal(a.body.Bytes(), &up); err != nil || up.UploadID == "" {
		return "", bridge.Internal(bridge.CodeInternal, "the upload's answer could not be read", err)
	}
	return up.UploadID, nil
}

// forgetUpload deletes an upload the door made for one send (a link): the
// send has its own copy.
func (d *Door) forgetUpload(r *http.Request, id string) {
	if _, err := d.call(r, http.MethodDelete, "/api/uploads/"+pathEscape(id), nil, ""); err != nil {
		d.cfg.Log.V(1).Info("forget linked upload", "error", err.Error())
	}
}

// deleteMedia is DELETE /{version}/{media_id}: an uploaded file is
// forgotten.
func (d *Door) deleteMedia(w http.ResponseWriter, r *http.Request) error {
	id := mux.Vars(r)["id"]
	if a, err := d.call(r, http.MethodDelete, "/api/uploads/"+pathEscape(id), nil, ""); err != nil {
		if a != nil && a.status == http.StatusNotFound {
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
