package settings

import (
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

func TestParseSendRate(t *testing.T) {
	for _, tc := range []struct {
		text     string
		interval time.Duration
		err      string
	}{
		{"20/m", 3 * time.Second, ""},
		{"1/h", time.Hour, ""},
		{"5/s", 200 * time.Millisecond, ""},
		{"100000/s", 10 * time.Microsecond, ""},
		{"", 0, "is not a rate"},
		{"20", 0, "is not a rate"},
		{"20/", 0, "is not a rate"},
		{"/m", 0, "is not a rate"},
		{"20/d", 0, "is not a rate"},
		{"20/M", 0, "is not a rate"},
		{"-1/s", 0, "is not a rate"},
		{"1.5/s", 0, "is not a rate"},
		{"0/s", 0, "is not a rate"},
		{"007/s", 0, "is not a rate"},
		{"20/m ", 0, "is not a rate"},
		{"1/s/s", 0, "is not a rate"},
		{"100001/s", 0, "count must be from 1 to 100000"},
		{"9999999999/s", 0, "is not a rate"},
	} {
		r, err := ParseSendRate(tc.text)
		switch {
		case tc.err == "" && (err != nil || r.Interval() != tc.interval || r.String() != tc.text):
			t.Errorf("ParseSendRate(%q) = %v (every %s), %v; want every %s", tc.text, r, r.Interval(), err, tc.interval)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseSendRate(%q) error %v, want %q", tc.text, err, tc.err)
		}
	}
	if (bridge.SendRate{}).Interval() != 0 || (bridge.SendRate{}).String() != "unpaced" {
		t.Error("the zero rate is not unpaced")
	}
}

func TestParseTypingDelay(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bridge.TypingDelay
		err  string
	}{
		{"", bridge.TypingDelay{}, ""},
		{"off", bridge.TypingDelay{}, ""},
		{"50ms/char", bridge.TypingDelay{PerChar: 50 * time.Millisecond, Max: 5 * time.Second}, ""},
		{"40ms/char,max=8s", bridge.TypingDelay{PerChar: 40 * time.Millisecond, Max: 8 * time.Second}, ""},
		{"1ms/char,max=1ms", bridge.TypingDelay{PerChar: time.Millisecond, Max: time.Millisecond}, ""},
		{"OFF", bridge.TypingDelay{}, "is not a typing delay"},
		{"50ms", bridge.TypingDelay{}, "is not a typing delay"},
		{"50ms/word", bridge.TypingDelay{}, "is not a typing delay"},
		{"fast/char", bridge.TypingDelay{}, "time per character"},
		{"500us/char", bridge.TypingDelay{}, "time per character"},
		{"50ms/char,", bridge.TypingDelay{}, "max= must be"},
		{"50ms/char,max=", bridge.TypingDelay{}, "max= must be"},
		{"50ms/char,max=61s", bridge.TypingDelay{}, "max= must be"},
		{"50ms/char,cap=5s", bridge.TypingDelay{}, "max= must be"},
		{"50ms/char,max=5s,max=6s", bridge.TypingDelay{}, "max= must be"},
	} {
		d, err := ParseTypingDelay(tc.text)
		switch {
		case tc.err == "" && (err != nil || d != tc.want):
			t.Errorf("ParseTypingDelay(%q) = %+v, %v; want %+v", tc.text, d, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseTypingDelay(%q) error %v, want %q", tc.text, err, tc.err)
		}
	}
}

// Settings text is untrusted: the parsers never panic and what they accept
// is within bounds and prints back as a rate they accept.
func FuzzParseSendRate(f *testing.F) {
	for _, s := range []string{"20/m", "1/h", "100000/s", "0/s", "1/", "/", "", "9/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseSendRate(text)
		if err != nil {
			return
		}
		if iv := r.Interval(); iv < minSendInterval || iv > maxSendInterval {
			t.Fatalf("%q accepted with interval %s", text, iv)
		}
		if again, err := ParseSendRate(r.String()); err != nil || again != r {
			t.Fatalf("%q -> %s does not parse back: %v", text, r, err)
		}
	})
}

func FuzzParseTypingDelay(f *testing.F) {
	for _, s := range []string{"off", "50ms/char", "40ms/char,max=8s", "1h/char", ",max=", "/char"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		d, err := ParseTypingDelay(text)
		if err != nil || d.Off() {
			return
		}
		if d.PerChar < minTypingPerChar || d.PerChar > maxTypingPerChar || d.Max < d.PerChar || d.Max > maxTypingCap {
			t.Fatalf("%q accepted as %+v", text, d)
		}
		if again, err := ParseTypingDelay(d.String()); err != nil || again != d {
			t.Fatalf("%q -> %s does not parse back: %v", text, d, err)
		}
	})
}
