package httpapi

import (
	"bytes"
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
	// errKeyAfterFile: a key in the form is read as it comes, and a file
	// is stored only for a caller already known.
	errKeyAfterFile = bridge.Errorf(bridge.KindUnauthorized, "unauthorized",
		"missing or invalid credential: send the API key in the X-Api-Key header, or as the apiKey field before any file[] part")
)

// readFailed is the error of a body that could not be read: over the
// request's size bound (413), else malformed.
func readFailed(err error) error {
	if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
		return bridge.Errorf(bridge.KindTooLarge, "body_too_large", "the body is larger than any valid request")
	}
	return errMalformed
}

// errMixedForms refuses a body that names one field in both its forms: a
// urlencoded body's fields have no order between names, so the items'
// order would be a guess.
func errMixedForms(name string) error {
	return bridge.Invalid("mixed_field_forms", "use either %s or %s[], not both, in one request", name, name)
}

func spoolFailed(err error) error {
	return bridge.Internal("spool_failed", "the attachment could not be stored", err)
}

// sendForm is the raw content of POST /send, files already spooled.
type sendForm struct {
	number string
	types  []string
	texts  []string
	files  []*sendqueue.SpooledFile
	// authorize checks an apiKey field; authorized is set once a key (in
	// the header, query or form) passed.
	authorize  func(key string) error
	authorized bool
	// forms is the form ("type" or "type[]") each repeatable field took.
	forms map[string]string
}

// discard deletes the spooled files of a rejected request.
func (f *sendForm) discard() {
	for _, sf := range f.files {
		_ = os.Remove(sf.Path) //nolint:gosec // a path spool created under DATA_DIR/spool
	}
}

// readSendForm reads the body of POST /send: multipart/form-data, or
// application/x-www-form-urlencoded for text only. Files are streamed to
// the spool and never held in memory; one larger than maxFile stops the
// read at once with 413. An apiKey field is checked with authorize as soon
// as it is read, and a file part before any key passed stops the read with
// 401 (authorized: a key outside the body passed already). On error every
// spooled file is already deleted.
func readSendForm(r *http.Request, space *spoolSpace, maxFile int64, authorized bool, authorize func(string) error) (*sendForm, error) {
	mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		mediaType = ""
	}
	f := &sendForm{authorize: authorize, authorized: authorized, forms: map[string]string{}}
	var ferr error
	switch mediaType {
	case "multipart/form-data":
		boundary := params["boundary"]
		if boundary == "" {
			return nil, bridge.Invalid("invalid_form", "multipart/form-data needs a boundary")
		}
		tail := &tailReader{r: r.Body}
		ferr = f.readMultipart(multipart.NewReader(tail, boundary), tail, boundary, space, maxFile)
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
	// The key first, whatever its place: nothing else is acted on before.
	if keys, ok := values["apiKey"]; ok {
		if err := f.addField("apiKey", keys[0]); err != nil {
			return err
		}
		delete(values, "apiKey")
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

// readMultipart reads the parts in order. The body must end with its
// closing boundary: multipart.Reader also ends cleanly on a body cut off
// right after a boundary line, which would send a truncated request.
func (f *sendForm) readMultipart(mr *multipart.Reader, tail *tailReader, boundary string, space *spoolSpace, maxFile int64) error {
	fieldBytes := 0
	for {
		part, err := mr.NextPart()
		if err == io.EOF { //nolint:errorlint // only a bare io.EOF is the clean end; a wrapped one is a broken body
			if !tail.closedBy(boundary) {
				return bridge.Invalid("invalid_form", "the multipart body ends without its closing boundary")
			}
			return nil
		}
		if err != nil {
			return readFailed(err)
		}
		if name := part.FormName(); name == "file" || name == "file[]" {
			err = f.readFilePart(part, space, maxFile)
		} else {
			err = f.readFieldPart(part, name, &fieldBytes)
		}
		if err != nil {
			return err
		}
	}
}

// readFilePart spools one file part, once the caller is known: nothing is
// written for a caller whose key has not been verified.
func (f *sendForm) readFilePart(part *multipart.Part, space *spoolSpace, maxFile int64) error {
	if len(f.files) >= maxItems {
		return errTooManyItems
	}
	if !f.authorized {
		if err := f.authorize(""); err != nil && bridge.ErrorKind(err) == bridge.KindUnauthorized {
			return errKeyAfterFile
		} else if err != nil {
			return err
		}
	}
	sf, err := space.spool(part, maxFile)
	if sf != nil {
		f.files = append(f.files, sf) // owned by f from here, even on error
	}
	return err
}

// readFieldPart reads one non-file field; all fields together stay under
// maxFieldBytes, counted in *fieldBytes.
func (f *sendForm) readFieldPart(part *multipart.Part, name string, fieldBytes *int) error {
	raw, err := io.ReadAll(io.LimitReader(part, int64(maxFieldBytes-*fieldBytes)+1))
	if err != nil {
		return readFailed(err)
	}
	if *fieldBytes += len(raw); *fieldBytes > maxFieldBytes {
		return errFieldsTooLarge
	}
	return f.addField(name, string(raw))
}

func (f *sendForm) addField(name, value string) error {
	if base, ok := strings.CutSuffix(name, "[]"); ok || name == "type" || name == "text" {
		if seen, ok := f.forms[base]; ok && seen != name {
			return errMixedForms(base)
		}
		f.forms[base] = name
	}
	switch name {
	case "apiKey":
		if !f.authorized {
			if err := f.authorize(value); err != nil {
				return err
			}
			f.authorized = true
		}
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

// tailReader remembers the last bytes read through it: enough to hold the
// closing boundary, which multipart.Reader reads through a buffer of 4 KiB.
type tailReader struct {
	r       io.Reader
	tail    []byte
	trimmed bool // the body's start is no longer in tail
}

const tailKeep = 4096 + 256

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.tail = append(t.tail, p[:n]...)
	if len(t.tail) > 2*tailKeep {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailKeep:]...)
		t.trimmed = true
	}
	return n, err
}

// closedBy reports whether the closing boundary was read: "--boundary--" at
// the start of the body or of a line.
func (t *tailReader) closedBy(boundary string) bool {
	closing := []byte("--" + boundary + "--")
	return (!t.trimmed && bytes.HasPrefix(t.tail, closing)) || bytes.Contains(t.tail, append([]byte("\n"), closing...))
}

// queueRequest is the queue's request for items to recipient.
func queueRequest(recipient bridge.Recipient, items []sendItem) sendqueue.Request {
	req := sendqueue.Request{Recipient: recipient, Items: make([]sendqueue.Item, len(items))}
	for i, it := range items {
		req.Items[i] = sendqueue.Item{Type: it.typ, Text: it.text, File: it.file}
	}
	return req
}
