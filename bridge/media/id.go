package media

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/msgbridge/msgbridge/bridge"
)

// idPrefix marks media ids; the rest is 16 random bytes in lowercase hex,
// which is also the file's name under DATA_DIR/media.
const (
	idPrefix = "med_"
	idHexLen = 32
)

// ErrInvalidID is the answer to a malformed media id.
var ErrInvalidID = &bridge.Error{Kind: bridge.KindInvalid, Code: bridge.CodeInvalidMediaID,
	Message: "a media id is med_ followed by 32 lowercase hex digits"}

// NewID returns a fresh media id.
func NewID() string {
	var b [idHexLen / 2]byte
	_, _ = rand.Read(b[:])
	return idPrefix + hex.EncodeToString(b[:])
}

// ParseID checks an id from a request: exactly med_ and 32 lowercase hex
// digits, so that it can never name a path outside DATA_DIR/media.
func ParseID(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, idPrefix)
	if !ok || len(rest) != idHexLen {
		return "", ErrInvalidID
	}
	for _, c := range rest {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", ErrInvalidID
		}
	}
	return s, nil
}
