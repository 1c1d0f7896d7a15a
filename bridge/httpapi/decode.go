package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
)

// maxJSONBody bounds the JSON bodies of the admin and session endpoints,
// which are a few fields each.
const maxJSONBody = 64 << 10

// decodeJSON reads r's body into v strictly: JSON content type (415
// otherwise), one object, no unknown fields, at most maxJSONBody bytes.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	return decodeJSONMax(w, r, v, maxJSONBody)
}

// decodeJSONMax is decodeJSON with a bound of limit bytes.
func decodeJSONMax(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return bridge.Errorf(bridge.KindUnsupported, "unsupported_media_type", "the body must be application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return bridge.Errorf(bridge.KindTooLarge, "body_too_large", "the body must be at most %d bytes", limit)
		}
		return bridge.Invalid("invalid_json", "the body is not a valid JSON object of the expected fields: %s", err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bridge.Invalid("invalid_json", "the body must hold exactly one JSON object")
	}
	return nil
}
