package logging

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
)

// redacted replaces every value the safety net withholds.
const redacted = "[redacted]"

// maxDepth bounds how deep a nested value is rendered, so that a cyclic or
// very deep structure cannot make one log call run away.
const maxDepth = 8

// secretKeyParts are the fragments of key names whose values are withheld
// even when the caller forgot to wrap them in bridge.Secret. Keys are
// compared lowercased with separators removed, so apiKey, api_key, API-Key
// and x-api-key all match "apikey".
var secretKeyParts = []string{
	"apikey", "token", "secret", "password", "passwd", "authorization",
	"encryptionkey", "privatekey", "cookie", "pairingcode",
}

// wholeKeys are withheld only as whole names (not fragments), so that
// textLength stays visible: message contents (people's messages never
// reach a log file) and the QR string, which links the account while valid.
var wholeKeys = []string{"text", "body", "caption", "qr"}

// withheld reports whether a key's value must not be written.
func withheld(key string) bool {
	norm := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		default:
			return -1 // drop separators: api_key, api-key, api.key
		}
	}, key)
	if slices.Contains(wholeKeys, norm) {
		return true
	}
	for _, part := range secretKeyParts {
		if strings.Contains(norm, part) {
			return true
		}
	}
	return false
}

// appendPairs appends ,"key":value for each pair of kvs. A key without a
// value gets "<no-value>"; keys in reserved are renamed with a trailing
// underscore so that a line never has two "msg" or "ts" fields.
func appendPairs(b []byte, kvs []any, reserved func(string) bool) []byte {
	for i := 0; i < len(kvs); i += 2 {
		key, ok := kvs[i].(string)
		if !ok {
			key = fmt.Sprint(kvs[i])
		}
		var v any = "<no-value>"
		if i+1 < len(kvs) {
			v = kvs[i+1]
		}
		if reserved(key) {
			key += "_"
		}
		b = append(b, ',')
		b = appendString(b, key)
		b = append(b, ':')
		if withheld(key) {
			b = appendString(b, redacted)
			continue
		}
		b = appendValue(b, v, 0)
	}
	return b
}

// appendValue renders v as JSON. Values that know how to log themselves
// (logr.Marshaler, such as bridge.Secret) are asked first, at every depth:
// a Secret inside a struct is as hidden as one passed directly. Struct
// fields and map keys go through the same key-name safety net.
func appendValue(b []byte, v any, depth int) (out []byte) {
	defer func() {
		// A MarshalLog or String method that panics must not take the
		// process down from inside a log call.
		if r := recover(); r != nil {
			out = appendString(b, fmt.Sprintf("<panic: %v>", r))
		}
	}()
	if depth > maxDepth {
		return appendString(b, "<max depth>")
	}
	if m, ok := v.(logr.Marshaler); ok {
		v = m.MarshalLog()
		if _, again := v.(logr.Marshaler); again {
			return appendString(b, fmt.Sprint(v)) // do not recurse on a self-returning marshaler
		}
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		return appendNumber(b, reflect.ValueOf(x))
	case float32:
		return appendFloat(b, float64(x), 32)
	case float64:
		return appendFloat(b, x, 64)
	case time.Time:
		return appendString(b, x.UTC().Format(time.RFC3339Nano))
	case time.Duration:
		return appendString(b, x.String())
	case error:
		return appendString(b, x.Error())
	case fmt.Stringer:
		return appendString(b, x.String())
	case json.Marshaler:
		raw, err := x.MarshalJSON()
		if err != nil || !json.Valid(raw) {
			return appendString(b, fmt.Sprintf("<invalid json: %v>", err))
		}
		return append(b, raw...)
	}
	return appendReflect(b, reflect.ValueOf(v), depth)
}

func appendNumber(b []byte, rv reflect.Value) []byte {
	if rv.CanInt() {
		return strconv.AppendInt(b, rv.Int(), 10)
	}
	return strconv.AppendUint(b, rv.Uint(), 10)
}

// appendFloat writes NaN and infinities, which JSON lacks, as strings.
func appendFloat(b []byte, f float64, bits int) []byte {
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if s == "NaN" || strings.HasSuffix(s, "Inf") {
		return appendString(b, s)
	}
	return append(b, s...)
}

// appendReflect renders composite values field by field (rather than with
// encoding/json) so that every nested value passes through appendValue.
func appendReflect(b []byte, rv reflect.Value, depth int) []byte {
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return append(b, "null"...)
		}
		return appendValue(b, rv.Elem().Interface(), depth+1)
	case reflect.Bool:
		return strconv.AppendBool(b, rv.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return appendNumber(b, rv)
	case reflect.Float32, reflect.Float64:
		return appendFloat(b, rv.Float(), 64)
	case reflect.String:
		return appendString(b, rv.String())
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			return appendString(b, fmt.Sprintf("<%d bytes>", rv.Len())) // raw bytes are never logged
		}
		b = append(b, '[')
		for i := range rv.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, rv.Index(i).Interface(), depth+1)
		}
		return append(b, ']')
	case reflect.Map:
		return appendMap(b, rv, depth)
	case reflect.Struct:
		return appendStruct(b, rv, depth)
	default: // chan, func, unsafe pointer
		return appendString(b, rv.Type().String())
	}
}

func appendMap(b []byte, rv reflect.Value, depth int) []byte {
	type entry struct {
		key string
		val reflect.Value
	}
	entries := make([]entry, 0, rv.Len())
	for it := rv.MapRange(); it.Next(); {
		entries = append(entries, entry{fmt.Sprint(it.Key().Interface()), it.Value()})
	}
	// Sorted, so that equal maps give equal lines.
	slices.SortFunc(entries, func(x, y entry) int { return strings.Compare(x.key, y.key) })
	b = append(b, '{')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendField(b, e.key, e.val, depth)
	}
	return append(b, '}')
}

func appendStruct(b []byte, rv reflect.Value, depth int) []byte {
	t := rv.Type()
	b = append(b, '{')
	first := true
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == "-" {
			continue
		} else if tag != "" {
			name = tag
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendField(b, name, rv.Field(i), depth)
	}
	return append(b, '}')
}

func appendField(b []byte, key string, val reflect.Value, depth int) []byte {
	b = appendString(b, key)
	b = append(b, ':')
	if withheld(key) {
		return appendString(b, redacted)
	}
	return appendValue(b, val.Interface(), depth+1)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD so
// that every line stays valid JSON whatever a peer sent us.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029': // valid JSON, but break JavaScript readers
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
