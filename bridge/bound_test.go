package bridge_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
)

// A contact's oversized strings are cut to their bounds at a character's
// start, each cut named with the field's whole size; a message within its
// bounds is left untouched.
func TestIncomingIsBounded(t *testing.T) {
	huge := strings.Repeat("é", 6<<20) // 12 MB of two-byte characters
	in := bridge.Incoming{
		Type: "contact", Text: huge, PushName: strings.Repeat("n", 5000),
		Media:    &bridge.Media{FileName: strings.Repeat("f", 4096)},
		Contacts: make([]bridge.ContactCard, 100),
	}
	in.Contacts[1].VCard = strings.Repeat("v", 1<<20)
	in.Bound()
	if len(in.Text) > bridge.MaxIncomingText || !utf8.ValidString(in.Text) || len(in.Text) < bridge.MaxIncomingText-1 {
		t.Errorf("text cut to %d bytes, valid UTF-8 %v", len(in.Text), utf8.ValidString(in.Text))
	}
	if len(in.PushName) != 1024 || len(in.Media.FileName) != 1024 || len(in.Contacts) != bridge.MaxIncomingContacts ||
		len(in.Contacts[1].VCard) != bridge.MaxIncomingVCard {
		t.Errorf("push name %d, file name %d, %d contacts, vCard %d", len(in.PushName), len(in.Media.FileName), len(in.Contacts), len(in.Contacts[1].VCard))
	}
	want := map[string]int{"text": len(huge), "push_name": 5000, "media.file_name": 4096, "contacts": 100, "contacts[1].vcard": 1 << 20}
	if len(in.Truncated) != len(want) {
		t.Errorf("cuts %+v, want %v", in.Truncated, want)
	}
	for _, c := range in.Truncated {
		if want[c.Field] != c.Size {
			t.Errorf("cut %s of %d bytes, want %d", c.Field, c.Size, want[c.Field])
		}
	}
	small := bridge.Incoming{Type: "text", Text: "hi", PushName: "Ana"}
	small.Bound()
	if small.Truncated != nil || small.Text != "hi" {
		t.Errorf("a message within its bounds was changed: %+v", small)
	}
}

func FuzzIncomingBound(f *testing.F) {
	f.Add("hi", 3)
	f.Add(strings.Repeat("ü", 40000), 70000)
	f.Fuzz(func(t *testing.T, s string, repeat int) {
		repeat = max(1, min(repeat, 1<<17)/max(1, len(s)))
		in := bridge.Incoming{Text: strings.Repeat(s, repeat), Emoji: s}
		valid := utf8.ValidString(in.Text)
		in.Bound()
		if len(in.Text) > bridge.MaxIncomingText || len(in.Emoji) > 64 || (valid && !utf8.ValidString(in.Text)) {
			t.Fatalf("bounded to %d bytes, emoji %d, valid %v", len(in.Text), len(in.Emoji), utf8.ValidString(in.Text))
		}
	})
}
