package phone

import (
	"errors"
	"testing"
)

func TestNormalize(t *testing.T) {
	cases := map[string]string{
		"4915112345678":      "4915112345678",
		"+4915112345678":     "4915112345678",
		"+49 151-1234 5678":  "4915112345678",
		"  +1 555 123 4567 ": "15551234567",
		"1234567":            "1234567",
		"123456789012345":    "123456789012345",
	}
	for in, want := range cases {
		got, err := Normalize(in)
		if err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "+", "123456", "1234567890123456", "0151123456", "++4915112345678",
		"49151a2345678", "4915112345678@s.whatsapp.net", "49(151)12345678", "49.151.1234", "٤٩١٥١١٢٣٤٥٦٧٨", "49151\n12345678"} {
		if got, err := Normalize(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("Normalize(%q) = %q, %v; want ErrInvalid", in, got, err)
		}
	}
}

func TestNormalizeGroup(t *testing.T) {
	for _, in := range []string{"120363025246125486@g.us", "4915112345678-1609459200@g.us"} {
		if got, err := NormalizeGroup(in); err != nil || got != in {
			t.Errorf("NormalizeGroup(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"@g.us", "abc@g.us", "1-2-3@g.us", "-1@g.us", "123@s.whatsapp.net", "123@g.us.evil", "123"} {
		if _, err := NormalizeGroup(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("NormalizeGroup(%q) accepted", in)
		}
	}
}

// FuzzNormalize: never panics; what it accepts is 7-15 ASCII digits not
// starting with 0, and normalising that again gives the same result.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"+49 151-1234 5678", "", "0", "12345678901234567890", "+-", "١٢٣٤٥٦٧"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Normalize(in)
		if err != nil {
			return
		}
		if len(got) < minDigits || len(got) > maxDigits || got[0] == '0' {
			t.Fatalf("Normalize(%q) = %q", in, got)
		}
		for _, c := range got {
			if c < '0' || c > '9' {
				t.Fatalf("Normalize(%q) = %q has a non-digit", in, got)
			}
		}
		if again, err := Normalize(got); err != nil || again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, got, again, err)
		}
	})
}

func FuzzNormalizeGroup(f *testing.F) {
	f.Add("120363025246125486@g.us")
	f.Add("1-2@g.us")
	f.Fuzz(func(t *testing.T, in string) {
		if got, err := NormalizeGroup(in); err == nil && got != in {
			t.Fatalf("NormalizeGroup(%q) changed it to %q", in, got)
		}
	})
}
