package bridge

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func codeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestGroupFieldParsers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		code string
	}{
		{"subject", func() error { _, err := ParseGroupSubject("Ops"); return err }(), ""},
		{"empty subject", func() error { _, err := ParseGroupSubject("  "); return err }(), "invalid_subject"},
		{"long subject", func() error { _, err := ParseGroupSubject(strings.Repeat("é", 101)); return err }(), "invalid_subject"},
		{"control in subject", func() error { _, err := ParseGroupSubject("a\nb"); return err }(), "invalid_subject"},
		{"description with lines", func() error { _, err := ParseGroupDescription("a\nb"); return err }(), ""},
		{"long description", func() error { _, err := ParseGroupDescription(strings.Repeat("x", 2049)); return err }(), "invalid_description"},
		{"link", func() error { _, err := ParseInviteLink("https://chat.whatsapp.com/AbC123xyz"); return err }(), ""},
		{"other host", func() error { _, err := ParseInviteLink("https://evil.example/AbC"); return err }(), "invalid_invite_link"},
		{"action", func() error { _, err := ParseMemberAction("kick"); return err }(), "invalid_action"},
		{"no participants", func() error { _, err := ParseParticipants(nil); return err }(), "missing_participants"},
		{"six participants", func() error {
			_, err := ParseParticipants([]string{"491511", "491512", "491513", "491514", "491515", "491516"})
			return err
		}(), "too_many_participants"},
		{"a group as participant", func() error { _, err := ParseParticipants([]string{"120363000000000001@g.us"}); return err }(), "invalid_participant"},
		{"twice", func() error { _, err := ParseParticipants([]string{"4915112345678", "+49 151 12345678"}); return err }(), "duplicate_participant"},
		{"number and lid", func() error { _, err := ParseParticipants([]string{"4915112345678", "123456789@lid"}); return err }(), ""},
	} {
		if got := codeOf(tc.err); got != tc.code || (tc.code == "" && tc.err != nil) {
			t.Errorf("%s: %v, want code %q", tc.name, tc.err, tc.code)
		}
	}
}

func FuzzParseInviteLink(f *testing.F) {
	for _, s := range []string{"https://chat.whatsapp.com/AbC123", "AbC123", "", "https://chat.whatsapp.com/", "a b", "ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		code, err := ParseInviteLink(s)
		if err != nil {
			if codeOf(err) != "invalid_invite_link" {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if code == "" || strings.ContainsAny(code, "/: ") || InviteLink(code) != "https://chat.whatsapp.com/"+code {
			t.Fatalf("%q: code %q", s, code)
		}
	})
}

func FuzzParseGroupSubject(f *testing.F) {
	for _, s := range []string{"Ops", "", " ", "a\x00", strings.Repeat("x", 100), "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseGroupSubject(s)
		if err != nil {
			if codeOf(err) != "invalid_subject" {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if got != s || !utf8.ValidString(s) || utf8.RuneCountInString(s) > 100 {
			t.Fatalf("%q accepted as %q", s, got)
		}
	})
}

func FuzzParseParticipants(f *testing.F) {
	f.Add("4915112345678", "123@lid")
	f.Add("+49 151", "120363@g.us")
	f.Fuzz(func(t *testing.T, a, b string) {
		ps, err := ParseParticipants([]string{a, b})
		if err != nil {
			if codeOf(err) == "" {
				t.Fatalf("%q %q: uncoded %v", a, b, err)
			}
			return
		}
		for _, p := range ps {
			if p.Kind == RecipientGroup || p.JID() == "" {
				t.Fatalf("%q %q: %+v", a, b, ps)
			}
		}
	})
}
