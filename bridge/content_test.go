package bridge

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseCoordinate(t *testing.T) {
	for _, c := range []struct {
		in    string
		limit float64
		want  float64
		ok    bool
	}{
		{"52.520008", 90, 52.520008, true},
		{"-13.404954", 180, -13.404954, true},
		{"+90", 90, 90, true},
		{"-180.0", 180, -180, true},
		{"0", 90, 0, true},
		{"90.000001", 90, 0, false},
		{"180.5", 180, 0, false},
		{"NaN", 90, 0, false},
		{"Inf", 90, 0, false},
		{"1e1", 90, 0, false},
		{"0x1p-2", 90, 0, false},
		{"1_0", 90, 0, false},
		{"", 90, 0, false},
		{".5", 90, 0, false},
		{"5.", 90, 0, false},
		{"--5", 90, 0, false},
		{" 5", 90, 0, false},
		{"1234", 180, 0, false},
	} {
		got, ok := ParseCoordinate(c.in, c.limit)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseCoordinate(%q, %v) = %v, %v; want %v, %v", c.in, c.limit, got, ok, c.want, c.ok)
		}
	}
}

func TestParseVCard(t *testing.T) {
	good := "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Ada\r\n  Lovelace\r\nTEL;TYPE=cell:+441234\r\nEND:VCARD\r\n"
	card, err := ParseVCard(good)
	if err != nil || card.DisplayName != "Ada Lovelace" || card.VCard != good {
		t.Fatalf("ParseVCard(good) = %+v, %v", card, err)
	}
	if c, err := ParseVCard("begin:vcard\nVERSION:2.1\nFN:M\\, Jr.\nend:vcard"); err != nil || c.DisplayName != "M, Jr." {
		t.Errorf("lower-case 2.1 card: %+v, %v", c, err)
	}
	for name, bad := range map[string]string{
		"empty":       "",
		"no begin":    "VERSION:3.0\nFN:A\nEND:VCARD",
		"no end":      "BEGIN:VCARD\nVERSION:3.0\nFN:A",
		"no version":  "BEGIN:VCARD\nFN:A\nEND:VCARD",
		"bad version": "BEGIN:VCARD\nVERSION:5.0\nFN:A\nEND:VCARD",
		"no FN":       "BEGIN:VCARD\nVERSION:3.0\nN:A;B\nEND:VCARD",
		"blank FN":    "BEGIN:VCARD\nVERSION:3.0\nFN: \nEND:VCARD",
		"two cards":   "BEGIN:VCARD\nVERSION:3.0\nFN:A\nEND:VCARD\nBEGIN:VCARD\nVERSION:3.0\nFN:B\nEND:VCARD",
		"not a line":  "BEGIN:VCARD\nVERSION:3.0\nFN:A\ngarbage\nEND:VCARD",
		"not UTF-8":   "BEGIN:VCARD\nVERSION:3.0\nFN:\xff\nEND:VCARD",
		"NUL":         "BEGIN:VCARD\nVERSION:3.0\nFN:A\x00\nEND:VCARD",
		"over 64 KiB": "BEGIN:VCARD\nVERSION:3.0\nFN:A\nNOTE:" + strings.Repeat("x", MaxVCardBytes) + "\nEND:VCARD",
	} {
		if _, err := ParseVCard(bad); ErrorOf(err).Code != "invalid_vcard" {
			t.Errorf("%s: %v, want invalid_vcard", name, err)
		}
	}
}

func TestParseMentions(t *testing.T) {
	got, err := ParseMentions([]string{"+49 151 0000 0002", "123456@lid", "4915100000003@s.whatsapp.net"})
	if err != nil || len(got) != 3 || got[0].JID() != "4915100000002@s.whatsapp.net" || got[1].JID() != "123456@lid" {
		t.Fatalf("ParseMentions = %v, %v", got, err)
	}
	for name, bad := range map[string][]string{
		"group":        {"120363025246125486@g.us"},
		"not a number": {"bob"},
		"repeated":     {"4915100000002", "+4915100000002"},
		"too many":     make([]string, MaxMentions+1),
	} {
		if _, err := ParseMentions(bad); ErrorOf(err).Code != "invalid_mention" {
			t.Errorf("%s: %v, want invalid_mention", name, err)
		}
	}
}

func TestValidWhatsAppID(t *testing.T) {
	for id, want := range map[string]bool{
		"3EB0C431D24A7A8F2B6A": true, "3A1B": true, "ABCDEF0123456789ABCDEF0123456789": true,
		"": false, "3EB0-1": false, "../x": false, "3EB0 1": false, strings.Repeat("A", 65): false,
	} {
		if got := ValidWhatsAppID(id); got != want {
			t.Errorf("ValidWhatsAppID(%q) = %v", id, got)
		}
	}
}

func FuzzParseCoordinate(f *testing.F) {
	for _, s := range []string{"52.520008", "-180", "+90.0", "NaN", "1e5", "0x1p3", "", "-", "999.9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, limit := range []float64{90, 180} {
			v, ok := ParseCoordinate(s, limit)
			if ok && (math.IsNaN(v) || math.Abs(v) > limit) {
				t.Fatalf("ParseCoordinate(%q, %v) accepted %v", s, limit, v)
			}
			if !ok && v != 0 {
				t.Fatalf("a refused coordinate returned %v", v)
			}
		}
	})
}

func FuzzParseVCard(f *testing.F) {
	f.Add("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Bob\r\nEND:VCARD")
	f.Add("BEGIN:VCARD\nVERSION:4.0\nFN:A\n B\nEND:VCARD\n")
	f.Add("BEGIN:VCARD\nEND:VCARD")
	f.Add("x")
	f.Fuzz(func(t *testing.T, raw string) {
		card, err := ParseVCard(raw)
		if err != nil {
			if ErrorOf(err).Code != "invalid_vcard" {
				t.Fatalf("error %v", err)
			}
			return
		}
		if card.VCard != raw || strings.TrimSpace(card.DisplayName) == "" || !utf8.ValidString(card.DisplayName) {
			t.Fatalf("accepted %q as %+v", raw, card)
		}
	})
}

func FuzzParseMentions(f *testing.F) {
	f.Add("4915100000002", "+49 151 0000 0003")
	f.Add("1@lid", "1@lid")
	f.Add("1@g.us", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		got, err := ParseMentions([]string{a, b})
		if err != nil {
			if ErrorOf(err).Code != "invalid_mention" {
				t.Fatalf("error %v", err)
			}
			return
		}
		if len(got) != 2 || got[0] == got[1] {
			t.Fatalf("ParseMentions(%q, %q) = %v", a, b, got)
		}
		for _, r := range got {
			if r.Kind == RecipientGroup || r.JID() == "" {
				t.Fatalf("mention %+v", r)
			}
		}
	})
}
