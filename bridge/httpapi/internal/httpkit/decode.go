package httpkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
)

// MaxJSONBody bounds the JSON bodies of the admin and session endpoints,
// which are a few fields each.
const MaxJSONBody = 64 << 10

// DecodeJSON reads r's body into v strictly: JSON content type (415
// otherwise), one object, no unknown fields, at most MaxJSONBody bytes.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	return DecodeJSONMax(w, r, v, MaxJSONBody)
}

// DecodeJSONMax is DecodeJSON with a bound of limit bytes.
func DecodeJSONMax(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return bridge.Errorf(bridge.KindUnsupported, bridge.CodeUnsupportedMediaType, "the body must be application/json")
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return bridge.Errorf(bridge.KindTooLarge, bridge.CodeBodyTooLarge, "the body must be at most %d bytes", limit)
		}
		return bridge.Invalid(bridge.CodeInvalidJSON, "the body could not be read")
	}
	if err := CheckStrictJSON(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bridge.Invalid(bridge.CodeInvalidJSON, "the body is not a valid JSON object of the expected fields: %s", err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bridge.Invalid(bridge.CodeInvalidJSON, "the body must hold exactly one JSON object")
	}
	return nil
}

// errInvalidText refuses text that JSON would silently repair or that no
// message may carry: a proxy reading the raw body would see other text
// than the bridge sends.
var errInvalidText = bridge.Invalid(bridge.CodeInvalidText,
	"the body's strings must be valid UTF-8 without lone surrogates (\\ud800-\\udfff) or NUL characters")

// CheckStrictJSON refuses what encoding/json accepts but reads in a way a
// proxy might not: a body that is not one object (null included), a key
// twice in one object or in another case (the last would win, and "TO"
// would fill "to"), invalid UTF-8, lone surrogates and NUL in strings. The
// API's keys are lower case, so any upper-case letter in a key is refused,
// but in the objects of nameMaps, whose keys are names the caller chooses.
func CheckStrictJSON(raw []byte) error {
	if !utf8.Valid(raw) {
		return errInvalidText
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return bridge.Invalid(bridge.CodeInvalidJSON, "the body must be a JSON object")
	}
	return checkObject(dec, raw, 0, false)
}

// nameMaps are the fields whose value is an object of names the caller
// chooses rather than the API's fields: a subscription's headers, whose
// names HTTP reads in any case ("X-Team"). Their keys may hold upper case
// but still may not come twice in any case, which the receiver would read
// as one header.
var nameMaps = map[string]bool{"headers": true}

// maxJSONDepth bounds nesting: the API's bodies nest two or three levels.
const maxJSONDepth = 32

// checkObject walks one object whose '{' was read, and the values in it;
// names says its keys are names of a nameMaps field, not the API's fields.
func checkObject(dec *json.Decoder, raw []byte, depth int, names bool) error {
	if depth > maxJSONDepth {
		return bridge.Invalid(bridge.CodeInvalidJSON, "the body nests deeper than %d levels", maxJSONDepth)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bridge.Invalid(bridge.CodeInvalidJSON, "the body is not valid JSON")
		}
		key, _ := tok.(string)
		if err := checkString(key, raw); err != nil {
			return err
		}
		lower := strings.ToLower(key)
		if (key != lower && !names) || seen[lower] {
			return bridge.Invalid(bridge.CodeInvalidJSON, "the key %q is not one of the object's fields, or comes twice", bridge.Truncate(key, 64))
		}
		seen[lower] = true
		if err := checkValue(dec, raw, depth, nameMaps[key] && !names); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	if err != nil {
		return bridge.Invalid(bridge.CodeInvalidJSON, "the body is not valid JSON")
	}
	return nil
}

// checkValue walks one value: an object, an array or a scalar; names
// says an object's keys are caller-chosen names (see nameMaps).
func checkValue(dec *json.Decoder, raw []byte, depth int, names bool) error {
	tok, err := dec.Token()
	if err != nil {
		return bridge.Invalid(bridge.CodeInvalidJSON, "the body is not valid JSON")
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return checkObject(dec, raw, depth+1, names)
		}
		if depth > maxJSONDepth {
			return bridge.Invalid(bridge.CodeInvalidJSON, "the body nests deeper than %d levels", maxJSONDepth)
		}
		for dec.More() { // '['
			if err := checkValue(dec, raw, depth+1, false); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return bridge.Invalid(bridge.CodeInvalidJSON, "the body is not valid JSON")
		}
	case string:
		return checkString(t, raw)
	}
	return nil
}

// checkString refuses a decoded string with NUL, or with U+FFFD that the
// raw body does not hold: encoding/json put it there for a lone surrogate.
func checkString(s string, raw []byte) error {
	if strings.ContainsRune(s, 0) {
		return errInvalidText
	}
	if strings.ContainsRune(s, utf8.RuneError) && !bytes.ContainsRune(raw, utf8.RuneError) &&
		!bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`)) {
		return errInvalidText
	}
	return nil
}
