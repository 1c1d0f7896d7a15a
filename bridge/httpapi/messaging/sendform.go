package messaging

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// Bounds of one POST /send.
const (
	MaxItems      = 10      // messages per request
	MaxFieldBytes = 1 << 20 // all non-file fields together
)

// The form's errors that are not one field's.
var (
	errMalformed       = bridge.Invalid(bridge.CodeInvalidForm, "the multipart body is malformed")
	errFieldsTooLarge  = bridge.Errorf(bridge.KindTooLarge, bridge.CodeBodyTooLarge, "the form fields exceed 1 MiB")
	errSendContentType = bridge.Errorf(bridge.KindUnsupported, bridge.CodeUnsupportedMediaType,
		"the body must be multipart/form-data, or application/x-www-form-urlencoded for text only")
	errFilesNeedMultipart = bridge.Errorf(bridge.KindUnsupported, bridge.CodeUnsupportedMediaType, "files need multipart/form-data")
	errTooManyItems       = bridge.Invalid(bridge.CodeTooManyItems, "at most %d items per request", MaxItems)
	// errKeyAfterFile: a key in the form is read as it comes, and a file
	// is stored only for a caller already known.
	errKeyAfterFile = bridge.Errorf(bridge.KindUnauthorized, bridge.CodeUnauthorized,
		"missing or invalid credential: send the API key in the X-Api-Key header, or as the apiKey field before any file[] part")
)

// readFailed is the error of a body that could not be read: over the
// request's size bound (413), else malformed.
func readFailed(err error) error {
	if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
		return bridge.Errorf(bridge.KindTooLarge, bridge.CodeBodyTooLarge, "the body is larger than any valid request")
	}
	return errMalformed
}

// errMixedForms refuses a body that names one field in both its forms: a
// urlencoded body's fields have no order between names, so the items'
// order would be a guess.
func errMixedForms(name string) error {
	return bridge.Invalid(bridge.CodeMixedFieldForms, "use either %s or %s[], not both, in one request", name, name)
}

// spoolPart writes a file part into space under its cleaned name; a body
// that could not be read is the client's error (readFailed).
func spoolPart(space *spool.Space, part *multipart.Part, maxFile int64) (*spool.File, error) {
	sf, err := space.Write(part, cleanFileName(part.FileName()), maxFile)
	if re, ok := errors.AsType[*spool.ReadError](err); ok {
		err = readFailed(re.Err)
	}
	return sf, err
}

// sendForm is the raw content of POST /send, files already spooled.
type sendForm struct {
	number  string
	replyTo *string
	// lists holds the repeatable fields (see repeatable) by base name, in
	// the order they came.
	lists map[string][]string
	files []*sendqueue.SpooledFile
	// authorize checks an apiKey field; authorized is set once a key (in
	// the header, query or form) passed.
	authorize  func(key string) error
	authorized bool
	// forms is the form ("type" or "type[]") each repeatable field took.
	forms map[string]string
}

// repeatable are the fields that may come more than once, as name or
// name[] (not both), with how many values each takes.
var repeatable = map[string]int{
	"type": MaxItems, "text": MaxItems, "mentions": bridge.MaxMentions, "ptt": MaxItems,
	"latitude": MaxItems, "longitude": MaxItems, "name": MaxItems, "address": MaxItems, "vcard": MaxItems,
}

const formFields = "number, type[], text[], file[], reply_to, mentions[], ptt[], latitude[], longitude[], name[], address[], vcard[], apiKey"

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
func readSendForm(r *http.Request, space *spool.Space, maxFile int64, authorized bool, authorize func(string) error) (*sendForm, error) {
	mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		mediaType = ""
	}
	f := &sendForm{authorize: authorize, authorized: authorized, forms: map[string]string{}, lists: map[string][]string{}}
	var ferr error
	switch mediaType {
	case "multipart/form-data":
		boundary := params["boundary"]
		if boundary == "" {
			return nil, bridge.Invalid(bridge.CodeInvalidForm, "multipart/form-data needs a boundary")
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
	raw, err := io.ReadAll(io.LimitReader(body, MaxFieldBytes+1))
	if err != nil {
		return bridge.Invalid(bridge.CodeInvalidForm, "the body could not be read")
	}
	if len(raw) > MaxFieldBytes {
		return errFieldsTooLarge
	}
	values, err := url.ParseQuery(string(raw))
	if err != nil {
		return bridge.Invalid(bridge.CodeInvalidForm, "the body is not a valid urlencoded form")
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
func (f *sendForm) readMultipart(mr *multipart.Reader, tail *tailReader, boundary string, space *spool.Space, maxFile int64) error {
	fieldBytes := 0
	for {
		part, err := mr.NextPart()
		if err == io.EOF { //nolint:errorlint // only a bare io.EOF is the clean end; a wrapped one is a broken body
			if !tail.closedBy(boundary) {
				return bridge.Invalid(bridge.CodeInvalidForm, "the multipart body ends without its closing boundary")
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
func (f *sendForm) readFilePart(part *multipart.Part, space *spool.Space, maxFile int64) error {
	if len(f.files) >= MaxItems {
		return errTooManyItems
	}
	if !f.authorized {
		if err := f.authorize(""); err != nil && bridge.ErrorKind(err) == bridge.KindUnauthorized {
			return errKeyAfterFile
		} else if err != nil {
			return err
		}
	}
	sf, err := spoolPart(space, part, maxFile)
	if sf != nil {
		f.files = append(f.files, sf) // owned by f from here, even on error
	}
	return err
}

// readFieldPart reads one non-file field; all fields together stay under
// MaxFieldBytes, counted in *fieldBytes.
func (f *sendForm) readFieldPart(part *multipart.Part, name string, fieldBytes *int) error {
	raw, err := io.ReadAll(io.LimitReader(part, int64(MaxFieldBytes-*fieldBytes)+1))
	if err != nil {
		return readFailed(err)
	}
	if *fieldBytes += len(raw); *fieldBytes > MaxFieldBytes {
		return errFieldsTooLarge
	}
	return f.addField(name, string(raw))
}

func (f *sendForm) addField(name, value string) error {
	base, _ := strings.CutSuffix(name, "[]")
	if bound, ok := repeatable[base]; ok {
		if seen, ok := f.forms[base]; ok && seen != name {
			return errMixedForms(base)
		}
		f.forms[base] = name
		f.lists[base] = append(f.lists[base], value)
		if len(f.lists[base]) > bound {
			if base == "mentions" {
				return bridge.Invalid(bridge.CodeInvalidMention, "at most %d mentions", bound)
			}
			return errTooManyItems
		}
		return nil
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
	case "reply_to":
		if f.replyTo != nil {
			return bridge.Invalid(bridge.CodeInvalidReplyTo, "reply_to must be given once")
		}
		f.replyTo = &value
	default:
		return bridge.Invalid(bridge.CodeUnknownField, "unknown field %q; the fields are "+formFields, bridge.Truncate(name, 64))
	}
	return nil
}

// toRequest validates the whole form, all or nothing, into a request. The
// values of file[], ptt[], latitude[] and the like belong to the items of
// their type in order: the n-th file to the n-th image, document, video or
// audio item, the n-th latitude to the n-th location, and so on.
func (f *sendForm) toRequest() (sendqueue.Request, error) {
	types, texts := f.lists["type"], f.lists["text"]
	if len(types) == 0 {
		return sendqueue.Request{}, bridge.Invalid(bridge.CodeMissingType, "type[] must name at least one item: "+sendqueue.SendTypes)
	}
	if len(texts) > len(types) {
		return sendqueue.Request{}, bridge.Invalid(bridge.CodeUnexpectedText, "there are %d text[] values for %d items", len(texts), len(types))
	}
	c := &formCursor{form: f}
	d := sendqueue.Draft{To: f.number, ReplyTo: f.replyTo, Mentions: f.lists["mentions"], Items: make([]sendqueue.ItemDraft, len(types))}
	for i, typ := range types {
		text := ""
		if i < len(texts) {
			text = strings.ReplaceAll(texts[i], `\n`, "\n") // a literal backslash-n is a newline
		}
		it, err := c.next(bridge.MessageType(typ))
		if err != nil {
			return sendqueue.Request{}, err
		}
		it.Type, it.Text = typ, text
		d.Items[i] = it
	}
	req, err := d.Validate()
	if err != nil {
		return sendqueue.Request{}, err
	}
	return req, c.leftover()
}

// formCursor hands each item the next values of the fields of its type.
type formCursor struct {
	form                        *sendForm
	files, ptts, places, vcards int
}

func (c *formCursor) value(name string, n int) (string, bool) {
	if vs := c.form.lists[name]; n < len(vs) {
		return vs[n], true
	}
	return "", false
}

// next is the draft of the next item of type typ, without its type and text.
func (c *formCursor) next(typ bridge.MessageType) (sendqueue.ItemDraft, error) {
	var d sendqueue.ItemDraft
	kind, _ := typ.Kind()
	switch kind.Part {
	case bridge.PartFile:
		if c.files < len(c.form.files) {
			d.File = c.form.files[c.files]
			c.files++
		}
		if typ != bridge.TypeAudio {
			break
		}
		if v, ok := c.value("ptt", c.ptts); ok {
			c.ptts++
			ptt, err := parsePTT(v)
			if err != nil {
				return d, err
			}
			d.PTT = &ptt
		}
	case bridge.PartLocation:
		l, err := c.location()
		d.Location = l
		return d, err
	case bridge.PartContact:
		if v, ok := c.value("vcard", c.vcards); ok {
			c.vcards++
			d.VCard = &v
		}
	case bridge.PartNone, bridge.PartTarget, bridge.PartPoll, bridge.PartButtons: // polls and buttons: POST /api/messages
	}
	return d, nil
}

// location reads the next location's fields; nil when it has neither
// coordinate.
func (c *formCursor) location() (*sendqueue.LocationDraft, error) {
	n := c.places
	c.places++
	lat, hasLat := c.value("latitude", n)
	lon, hasLon := c.value("longitude", n)
	if !hasLat && !hasLon {
		return nil, nil
	}
	l := &sendqueue.LocationDraft{}
	l.Name, _ = c.value("name", n)
	l.Address, _ = c.value("address", n)
	for _, coord := range []struct {
		raw     string
		present bool
		limit   float64
		into    **float64
	}{{lat, hasLat, 90, &l.Latitude}, {lon, hasLon, 180, &l.Longitude}} {
		if !coord.present {
			continue
		}
		v, ok := bridge.ParseCoordinate(strings.TrimSpace(coord.raw), coord.limit)
		if !ok {
			return nil, bridge.Invalid(bridge.CodeInvalidLocation,
				"latitude and longitude must be decimal degrees within ±90 and ±180, e.g. 52.520008 and 13.404954")
		}
		*coord.into = &v
	}
	return l, nil
}

// leftover refuses values no item took.
func (c *formCursor) leftover() error {
	f := c.form
	switch {
	case c.files < len(f.files):
		return bridge.Invalid(bridge.CodeUnexpectedFile, "there are %d file[] values for %d media items", len(f.files), c.files)
	case c.ptts < len(f.lists["ptt"]):
		return bridge.Invalid(bridge.CodeUnexpectedPtt, "there are %d ptt[] values for %d audio items", len(f.lists["ptt"]), c.ptts)
	case c.vcards < len(f.lists["vcard"]):
		return bridge.Invalid(bridge.CodeUnexpectedVcard, "there are %d vcard[] values for %d contact items", len(f.lists["vcard"]), c.vcards)
	}
	for _, name := range []string{"latitude", "longitude", "name", "address"} {
		if n := len(f.lists[name]); n > c.places {
			return bridge.Invalid(bridge.CodeUnexpectedLocation, "there are %d %s[] values for %d location items", n, name, c.places)
		}
	}
	return nil
}

func parsePTT(v string) (bool, error) {
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, bridge.Invalid(bridge.CodeInvalidPtt, "ptt must be true or false")
}

// cleanFileName keeps the base name a client sent (spool.CleanFileName).
func cleanFileName(name string) string { return spool.CleanFileName(name) }

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
