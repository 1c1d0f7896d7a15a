package messaging

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

func FuzzParseChat(f *testing.F) {
	for _, s := range []string{"4915100000002", "+4915100000002", "120363025246125486@g.us", "1-2@g.us", "123@lid",
		"4915100000002@s.whatsapp.net", "49 151", "49-151", "", "@g.us", "x@y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseChat(s)
		if err != nil {
			if bridge.ErrorOf(err).Code != "invalid_chat" {
				t.Fatalf("code %s", bridge.ErrorOf(err).Code)
			}
			return
		}
		if strings.ContainsAny(s, " \t\r\n") || r.JID() == "" {
			t.Fatalf("accepted %q as %+v", s, r)
		}
		if again, err := parseChat(r.JID()); err != nil || again != r {
			t.Fatalf("%q -> %s does not parse back: %+v %v", s, r.JID(), again, err)
		}
	})
}

func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"4915100000002", "+4915100000002", "0151", "49 151", "49-151", "++49151000000", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseNumber(s)
		if err != nil {
			if bridge.ErrorOf(err).Code != "invalid_number" {
				t.Fatalf("code %s", bridge.ErrorOf(err).Code)
			}
			return
		}
		if n != strings.TrimPrefix(s, "+") || strings.Trim(n, "0123456789") != "" || n[0] == '0' {
			t.Fatalf("accepted %q as %q", s, n)
		}
	})
}

// FuzzActionBodies decodes arbitrary bodies into each action's and chat's
// body: strictly, never a panic, and a decoded body re-validates.
func FuzzActionBodies(f *testing.F) {
	for _, s := range []string{`{"emoji":"👍"}`, `{"emoji":""}`, `{"text":"x"}`, `{"message_id":"3A","sender":"49151"}`,
		`{"state":"paused"}`, `{}`, `[]`, `{"emoji":1}`, `{"emoji":"a"} {}`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		decode := func(v any) error {
			r := httptest.NewRequest("POST", "/", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			return httpkit.DecodeJSON(httptest.NewRecorder(), r, v)
		}
		var reaction reactionBody
		if decode(&reaction) == nil && reaction.Emoji != nil {
			_, _ = bridge.ParseEmoji(*reaction.Emoji)
		}
		var edit editBody
		if decode(&edit) == nil {
			if text, err := editText(edit.Text); err == nil && strings.TrimSpace(text) == "" {
				t.Fatalf("empty text accepted from %q", body)
			}
		}
		var read readBody
		if decode(&read) == nil && read.MessageID != nil {
			_, _ = parseMessageID(*read.MessageID)
			_, _ = readSender(bridge.Recipient{Kind: bridge.RecipientGroup, ID: "1"}, read.Sender)
		}
		var presence presenceBody
		if decode(&presence) == nil && presence.State != nil {
			_, _ = bridge.ParseChatPresence(*presence.State)
		}
	})
}
