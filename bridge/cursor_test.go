package bridge

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// badCursors are strings no listing returned: not base64, not "<ms>:<id>",
// and spellings of a real cursor that a lenient decoder would accept.
func badCursors() map[string]string {
	good := EncodeCursor(123, "a") // "MTIzOmE": 5 bytes, so 2 padding bits
	paddingBit := good[:len(good)-1] + string(base64URLAlphabet[strings.IndexByte(base64URLAlphabet, good[len(good)-1])+1])
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	return map[string]string{
		"not base64":         "!!",
		"no colon":           enc("nocolon"),
		"no id":              enc("123:"),
		"no time":            enc(":a"),
		"time not a number":  enc("x:a"),
		"negative time":      enc("-1:a"),
		"plus sign":          enc("+123:a"),
		"leading zero":       enc("0123:a"),
		"padded base64":      base64.URLEncoding.EncodeToString([]byte("123:a")),
		"standard alphabet":  base64.RawStdEncoding.EncodeToString([]byte("123:~~~")), // "+" where the URL alphabet has "-"
		"line break inside":  good[:3] + "\n" + good[3:],
		"stray padding bits": paddingBit,
		"trailing space":     good + " ",
	}
}

const base64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func TestCursor(t *testing.T) {
	c := EncodeCursor(1763719200123, "01a1feec-dd6c-7c06-8391-dc126fc74f67")
	ms, id, err := DecodeCursor(c)
	if err != nil || ms != 1763719200123 || id != "01a1feec-dd6c-7c06-8391-dc126fc74f67" {
		t.Fatalf("%d %q %v", ms, id, err)
	}
	for name, bad := range badCursors() {
		if ms, id, err := DecodeCursor(bad); err == nil {
			t.Errorf("%s: DecodeCursor(%q) = %d, %q", name, bad, ms, id)
		} else if !errors.Is(err, ErrBadCursor()) {
			t.Errorf("%s: %v, want invalid_cursor", name, err)
		}
	}
	if _, _, err := DecodeCursor(""); err == nil {
		t.Error("DecodeCursor accepted the empty cursor") // a listing never decodes it: it is the first page
	}
}

// FuzzDecodeCursor: a client controls the cursor; it must decode or be
// invalid_cursor, and what decodes is exactly a cursor a listing makes.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(EncodeCursor(1, "a"))
	f.Add("")
	for _, bad := range badCursors() {
		f.Add(bad)
	}
	f.Fuzz(func(t *testing.T, c string) {
		ms, id, err := DecodeCursor(c)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindInvalid || e.Code != "invalid_cursor" {
				t.Fatalf("error %v", err)
			}
			return
		}
		if again := EncodeCursor(ms, id); again != c {
			t.Fatalf("%q decodes to %d %q, which encodes to %q", c, ms, id, again)
		}
	})
}
