package bridge

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// The message listings (the outgoing log and the incoming history) page
// with one cursor format: the position (Unix milliseconds, id) of a page's
// last item, so that pages stay stable while items arrive. Clients treat
// it as opaque.

// EncodeCursor is the cursor of the item at (ms, id).
func EncodeCursor(ms int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(ms, 10) + ":" + id))
}

// ErrBadCursor is a cursor no listing returned.
func ErrBadCursor() *Error {
	return Invalid(CodeInvalidCursor, "cursor is not one this API returned")
}

// DecodeCursor accepts exactly the cursors EncodeCursor makes; anything
// else is ErrBadCursor. Decoding alone is lenient (base64 skips line breaks
// and ignores stray padding bits; ParseInt takes a sign and leading
// zeros), so a cursor must encode back to itself.
func DecodeCursor(c string) (int64, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", ErrBadCursor()
	}
	text, id, ok := strings.Cut(string(raw), ":")
	ms, err := strconv.ParseInt(text, 10, 64)
	if !ok || err != nil || ms < 0 || id == "" || EncodeCursor(ms, id) != c {
		return 0, "", ErrBadCursor()
	}
	return ms, id, nil
}
