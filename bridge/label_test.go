package bridge

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestParseLabel(t *testing.T) {
	if n, err := ParseLabelName("  Paid "); err != nil || n != "Paid" {
		t.Errorf("name: %q, %v", n, err)
	}
	for _, in := range []string{"", " ", "a\nb", "\x00", strings.Repeat("é", 101), "\xff"} {
		if _, err := ParseLabelName(in); codeOf(err) != CodeInvalidLabelName {
			t.Errorf("name %q: %v", in, err)
		}
	}
	for _, c := range []int{-1, 20} {
		if _, err := ParseLabelColor(c); codeOf(err) != CodeInvalidLabelColor {
			t.Errorf("color %d: %v", c, err)
		}
	}
	for _, in := range []string{"", "a", "-1", "12345678901"} {
		if _, err := ParseLabelID(in); codeOf(err) != CodeInvalidLabel {
			t.Errorf("id %q: %v", in, err)
		}
	}
}

func FuzzParseLabelName(f *testing.F) {
	for _, s := range []string{"Paid", " New customer ", "", "a\tb", "\xff", "💼"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, err := ParseLabelName(s)
		if err != nil {
			if codeOf(err) != CodeInvalidLabelName {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if name == "" || !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0 || utf8.RuneCountInString(name) > 100 {
			t.Fatalf("%q accepted as %q", s, name)
		}
		if again, err := ParseLabelName(name); err != nil || again != name {
			t.Fatalf("%q: %q does not read back: %q, %v", s, name, again, err)
		}
	})
}
