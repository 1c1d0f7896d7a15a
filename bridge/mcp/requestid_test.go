package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestToolCallID(t *testing.T) {
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`:       `7`,
		`{"jsonrpc":"2.0","id":"7","method":"tools/call"}`:     `"7"`,
		`{"jsonrpc":"2.0","id":7.0,"method":"tools/call"}`:     `7`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call"}`:    ``,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call"}`: ``,
		`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`:       ``,
		`{"jsonrpc":"2.0","method":"tools/call"}`:              ``,
		`[{"jsonrpc":"2.0","id":7,"method":"tools/call"}]`:     ``,
		`not json`: ``,
	} {
		got, ok := toolCallID([]byte(body))
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", body, got, ok, want)
		}
	}
}

// Whatever a client posts, the id found is a JSON number or string, and
// ids that differ as JSON-RPC ids give different keys.
func FuzzToolCallID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`))
	f.Add([]byte(`{"id":"a\u0000b","method":"tools/call"}`))
	f.Add([]byte(`{"id":1e400,"method":"tools/call"}`))
	f.Add([]byte(`{"id":-0,"method":"tools/call"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		id, ok := toolCallID(body)
		if !ok {
			if id != "" {
				t.Fatalf("no id, but %q", id)
			}
			return
		}
		var v any
		if err := json.Unmarshal([]byte(id), &v); err != nil {
			t.Fatalf("id %q is not JSON: %v", id, err)
		}
		switch v.(type) {
		case string, float64:
		default:
			t.Fatalf("id %q is neither a number nor a string", id)
		}
		if k := callKey("", "session", id); !strings.HasPrefix(k, "mcp-call:") || len(k) > 100 {
			t.Fatalf("key %q", k)
		}
	})
}

func FuzzParseMediaURI(f *testing.F) {
	for _, seed := range []string{"msgbridge://media/0b7c-11", "msgbridge://media/../x", "file:///etc/passwd", "msgbridge://media/"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		id, err := parseMediaURI(uri)
		if err != nil {
			return
		}
		if id == "" || strings.ContainsAny(id, "/.:%?#") || mediaURI(id) != uri {
			t.Fatalf("%q gave id %q", uri, id)
		}
	})
}
