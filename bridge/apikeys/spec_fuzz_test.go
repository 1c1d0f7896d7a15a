package apikeys

import (
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// A key request from the admin API or the resource, whatever it holds,
// is refused with one of the key codes or becomes a caller whose fields
// are within their bounds and whose chats are valid recipients.
func FuzzValidateRequest(f *testing.F) {
	f.Add("assistant", "read,send", "4915112345678,123@g.us,99@lid", 20)
	f.Add("Bad Name", "admin", "nope", -1)
	f.Add("a", "", "", 0)
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, name, scopes, chats string, budget int) {
		r := Request{Name: name, Scopes: splitList(scopes), Chats: splitList(chats), Budget: budget}
		c, err := r.Validate(now)
		if err != nil {
			if code := bridge.ErrorOf(err).Code; !strings.HasPrefix(code, "invalid_key_") {
				t.Fatalf("code %q for %+v", code, r)
			}
			return
		}
		if c.Name != name || len(c.Scopes) == 0 || len(c.Chats) > MaxChats || c.Budget < 0 || c.Budget > MaxBudget {
			t.Fatalf("caller %+v from %+v", c, r)
		}
		for _, chat := range c.Chats {
			if back, err := bridge.ParseRecipient(chat.String()); err != nil || back != chat {
				t.Fatalf("chat %v does not read back (%v)", chat, err)
			}
		}
	})
}
