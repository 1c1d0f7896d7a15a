package bridge

import (
	"strings"
	"testing"
)

func TestParseChannelInvite(t *testing.T) {
	for in, want := range map[string]string{
		"https://whatsapp.com/channel/0029VaZ4tB1H": "0029VaZ4tB1H",
		"https://www.whatsapp.com/channel/0029Va":   "0029Va",
		"whatsapp.com/channel/abc_-1":               "abc_-1",
		"\t0029Va\n":                                "0029Va",
	} {
		if got, err := ParseChannelInvite(in); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "https://whatsapp.com/channel/", "https://chat.whatsapp.com/abc", "a b", "ü", strings.Repeat("a", 65)} {
		if _, err := ParseChannelInvite(in); codeOf(err) != CodeInvalidChannelInvite {
			t.Errorf("%q: %v, want invalid_channel_invite", in, err)
		}
	}
}

func TestParseChannel(t *testing.T) {
	c, err := ParseChannel("120363025246125486@newsletter")
	if err != nil || c.Kind != RecipientChannel || c.JID() != "120363025246125486@newsletter" || c.String() != c.JID() {
		t.Fatalf("%+v, %v", c, err)
	}
	for _, in := range []string{"120363025246125486@g.us", "0123@newsletter", "@newsletter", "1a@newsletter", "4915112345678"} {
		if _, err := ParseChannel(in); codeOf(err) != CodeInvalidChannel {
			t.Errorf("%q: %v, want invalid_channel", in, err)
		}
	}
}

func FuzzParseChannelInvite(f *testing.F) {
	for _, s := range []string{"https://whatsapp.com/channel/0029Va", "0029Va", "", "https://whatsapp.com/channel/", "a b", "ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		code, err := ParseChannelInvite(s)
		if err != nil {
			if codeOf(err) != CodeInvalidChannelInvite {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if again, err := ParseChannelInvite(ChannelLink(code)); err != nil || again != code || strings.ContainsAny(code, "/: ") {
			t.Fatalf("%q: code %q, its link reads back as %q, %v", s, code, again, err)
		}
	})
}
