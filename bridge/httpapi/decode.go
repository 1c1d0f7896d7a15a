package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// maxJSONBody bounds the JSON bodies of the admin and session endpoints,
// which are a few fields each.
const maxJSONBody = 64 << 10

// decodeJSON reads r's body into v strictly: JSON content type (415
// otherwise), one object, no unknown fields, at most maxJSONBody bytes. On
// failure it has written the error response and returns false.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "the body must be application/json")
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJSONBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the body must be at most %d bytes", maxJSONBody))
			return false
		}
		writeError(w, http.StatusBadRequest, "invalid_json", "the body is not a valid JSON object of the expected fields: "+err.Error())
		return false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, "invalid_json", "the body must hold exactly one JSON object")
		return false
	}
	return true
}
