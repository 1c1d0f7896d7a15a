package httpapi

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// Bounds of one POST /send.
const (
	maxItems      = 10      // messages per request
	maxTextBytes  = 65536   // WhatsApp's own limit on a message body
	maxFieldBytes = 1 << 20 // all non-file fields together
	sniffLen      = 512     // what http.DetectContentType reads
	maxNameRunes  = 255     // a document's file name
)

// The form's errors that are not one field's.
var (
	errMalformed       = bridge.Invalid("invalid_form", "the multipart body is malformed")
	errFieldsTooLarge  = bridge.Errorf(bridge.KindTooLarge, "body_too_large", "the form fields exceed 1 MiB")
	errSendContentType = bridge.Errorf(bridge.KindUnsupported, "unsupported_media_type",
		"the body must be multipart/form-data, or application/x-www-form-urlencoded for text only")
	errFilesNeedMultipart = bridge.Errorf(bridge.KindUnsupported, "unsupported_media_type", "files need multipart/form-data")
	errTooManyItems       = bridge.Invalid("too_many_items", "at most %d items per request", maxItems)
)

func spoolFailed(err error) error {
	return bridge.Internal("spool_failed", "the attachment could not be stored", err)
}

// sendForm is the raw content of POST /send, files already spooled.
type sendForm struct {
	apiKey string
	number string
	types  []string
	texts  []string
	files  []*sendqueue.SpooledFile
}

// discard deletes the spooled files of a rejected request.
func (f *sendForm) discard() {
	for _, sf := range f.files {
		_ = os.Remove(sf.Path) //nolint:gosec // a path spool created under DATA_DIR/spool
	}
}

// readSendForm reads the body of POST /send: multipart/form-data, or
// application/x-www-form-urlencoded for text only. Files are streamed to
// spoolDir and never held in memory; one larger than maxFile stops the read
// at once with 413. On error every spooled file is already deleted.
func readSendForm(r *http.Request, spoolDir string, maxFile int64) (*sendForm, error) {
	mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		mediaType = ""
	}
	f := &sendForm{}
	var ferr error
	switch mediaType {
	case "multipart/form-data":
		if params["boundary"] == "" {
			return nil, bridge.Invalid("invalid_form", "multipart/form-data needs a boundary")
		}
		ferr = f.readMultipart(multipart.NewReader(r.Body, params["boundary"]), spoolDir, maxFile)
	case "application/x-www-form-urlencoded":
		ferr = f.readURLEncoded(r.Body)
	default:
		return nil, errSendContentType
	}
	if ferr != nil {
		f.discard()
		return nil, ferr
	}
	return f, nil
}

func (f *sendForm) readURLEncoded(body io.Reader) error {
	raw, err := io.ReadAll(io.LimitReader(body, maxFieldBytes+1))
	if err != nil {
		return bridge.Invalid("invalid_form", "the body could not be read")
	}
	if len(raw) > maxFieldBytes {
		return errFieldsTooLarge
	}
	values, err := url.ParseQuery(string(raw))
	if err != nil {
		return bridge.Invalid("invalid_form", "the body is not a valid urlencoded form")
	}
	for name, vs := range values {
		for _, v := range vs {
			if name == "file" || name == "file[]" {
				return errFilesNeedMultipart
			}
			if err := f.addField(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *sendForm) readMultipart(mr *multipart.Reader, spoolDir string, maxFile int64) error {
	fieldBytes := 0
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return errMalformed
		}
		name := part.FormName()
		if name == "file" || name == "file[]" {
			if len(f.files) >= maxItems {
				return errTooManyItems
			}
			sf, ferr := spool(part, spoolDir, maxFile)
			if sf != nil {
				f.files = append(f.files, sf) // owned by f from here, even on error
			}
			if ferr != nil {
				return ferr
			}
			continue
		}
		raw, err := io.ReadAll(io.LimitReader(part, int64(maxFieldBytes-fieldBytes)+1))
		if err != nil {
			return errMalformed
		}
		if fieldBytes += len(raw); fieldBytes > maxFieldBytes {
			return errFieldsTooLarge
		}
		if err := f.addField(name, string(raw)); err != nil {
			return err
		}
	}
}

func (f *sendForm) addField(name, value string) error {
	switch name {
	case "apiKey":
		f.apiKey = value
	case "number":
		f.number = value
	case "type", "type[]":
		f.types = append(f.types, value)
	case "text", "text[]":
		f.texts = append(f.texts, value)
	default:
		return bridge.Invalid("unknown_field", "unknown field %q; the fields are number, type[], text[], file[], apiKey", truncate(name, 64))
	}
	if len(f.types) > maxItems || len(f.texts) > maxItems {
		return errTooManyItems
	}
	return nil
}

// spool copies one file part to a new file in dir, stopping (413) as soon
// as it exceeds maxFile, and sniffs its type from its first bytes.
func spool(part *multipart.Part, dir string, maxFile int64) (*sendqueue.SpooledFile, error) {
	out, err := os.CreateTemp(dir, "send-*.part") //nolint:gosec // dir is DATA_DIR/spool; the name is random
	if err != nil {
		return nil, spoolFailed(err)
	}
	sf := &sendqueue.SpooledFile{Path: out.Name(), Name: cleanFileName(part.FileName())}
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(part, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		_ = out.Close()
		return sf, errMalformed
	}
	head = head[:n]
	rest, err := io.Copy(out, io.MultiReader(strings.NewReader(string(head)), io.LimitReader(part, maxFile+1-int64(n))))
	sf.Size = rest
	if err != nil {
		_ = out.Close()
		return sf, errMalformed
	}
	if sf.Size > maxFile {
		_ = out.Close()
		return sf, bridge.Errorf(bridge.KindTooLarge, "file_too_large", "each file must be at most %d bytes (MAX_FILE_SIZE)", maxFile)
	}
	// Durable before the message that refers to it is committed.
	if err := errors.Join(out.Sync(), out.Close()); err != nil {
		return sf, spoolFailed(err)
	}
	sf.MimeType = sniffType(head, sf.Name)
	return sf, nil
}

// sniffType trusts the content, not the client's header, except where the
// content says only "zip" or "bytes" and the file name's extension is more
// precise (an .docx is a zip; a .csv is text).
func sniffType(head []byte, name string) string {
	sniffed := http.DetectContentType(head)
	switch sniffed {
	case "application/octet-stream", "application/zip", "text/plain; charset=utf-8":
		if byExt := mime.TypeByExtension(strings.ToLower(filepath.Ext(name))); byExt != "" {
			return byExt
		}
	}
	return sniffed
}

// cleanFileName keeps the base name a client sent, without path parts or
// control characters, so it is safe to show on the recipient's phone.
func cleanFileName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, name)
	if name == "." || name == "/" {
		name = ""
	}
	return truncate(name, maxNameRunes)
}

func truncate(s string, runes int) string {
	if utf8.RuneCountInString(s) <= runes {
		return s
	}
	return string([]rune(s)[:runes])
}

// sendItem is one validated item of POST /send.
type sendItem struct {
	typ  bridge.MessageType
	text string
	file *sendqueue.SpooledFile // images and documents
}

// toRequest validates the whole form, all or nothing, into a request.
func (f *sendForm) toRequest() (sendqueue.Request, error) {
	recipient, err := bridge.ParseRecipient(f.number)
	if err != nil {
		return sendqueue.Request{}, err
	}
	if len(f.types) == 0 {
		return sendqueue.Request{}, bridge.Invalid("missing_type", "type[] must name at least one item: text, image or document")
	}
	if len(f.texts) > len(f.types) {
		return sendqueue.Request{}, bridge.Invalid("unexpected_text", "there are %d text[] values for %d items", len(f.texts), len(f.types))
	}
	items := make([]sendItem, len(f.types))
	nextFile := 0
	for i, typ := range f.types {
		text := ""
		if i < len(f.texts) {
			text = strings.ReplaceAll(f.texts[i], `\n`, "\n") // a literal backslash-n is a newline
		}
		if items[i], err = f.item(i, bridge.MessageType(typ), text, &nextFile); err != nil {
			return sendqueue.Request{}, err
		}
	}
	if nextFile < len(f.files) {
		return sendqueue.Request{}, bridge.Invalid("unexpected_file", "there are %d file[] values for %d image or document items", len(f.files), nextFile)
	}
	return queueRequest(recipient, items), nil
}

// item validates item i of type typ with its text, taking the next file
// (*nextFile counts those taken) when it is media.
func (f *sendForm) item(i int, typ bridge.MessageType, text string, nextFile *int) (sendItem, error) {
	if len(text) > maxTextBytes {
		return sendItem{}, bridge.Invalid("text_too_long", "text[%d] is longer than %d bytes", i, maxTextBytes)
	}
	if !utf8.ValidString(text) {
		return sendItem{}, bridge.Invalid("invalid_text", "text[%d] is not valid UTF-8", i)
	}
	it := sendItem{typ: typ, text: text}
	switch typ {
	case bridge.TypeText:
		if strings.TrimSpace(text) == "" {
			return sendItem{}, bridge.Invalid("empty_text", "item %d is text but text[%d] is empty", i, i)
		}
		return it, nil
	case bridge.TypeImage, bridge.TypeDocument:
	default:
		return sendItem{}, bridge.Invalid("unknown_type", "type[%d] %q is not text, image or document", i, truncate(string(typ), 32))
	}
	if *nextFile >= len(f.files) {
		return sendItem{}, bridge.Invalid("missing_file", "item %d is %s but has no file[]", i, typ)
	}
	it.file = f.files[*nextFile]
	*nextFile++
	if typ == bridge.TypeImage && !isImage(it.file.MimeType) {
		return sendItem{}, bridge.Invalid("invalid_image", "file for item %d is %s, not a JPEG, PNG or WebP image", i, it.file.MimeType)
	}
	if typ == bridge.TypeDocument && it.file.Name == "" {
		it.file.Name = "document"
	}
	return it, nil
}

func isImage(mimeType string) bool {
	switch mimeType {
	case "image/jpeg", "image/png", "image/webp":
		return true
	}
	return false
}
