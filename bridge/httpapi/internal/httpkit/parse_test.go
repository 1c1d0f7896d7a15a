package httpkit

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/logging"
)

// codeOf is the code of a validation error; "" for anything else.
func codeOf(err error) string {
	if e := bridge.ErrorOf(err); err != nil && e.Kind == bridge.KindInvalid {
		return e.Code
	}
	return ""
}

func TestParseDate(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"2026-11-21", true},
		{"2024-02-29", true}, // leap year
		{"2026-02-30", false},
		{"2025-02-29", false},
		{"2026-13-01", false},
		{"2026-00-10", false},
		{"2026-11-00", false},
		{"2026-1-21", false},
		{"26-11-21", false},
		{"2026/11/21", false},
		{"2026-11-21/..", false},
		{"../../etc", false},
		{"2026.11.21", false},
		{"2026-11-2.", false},
		{"2026-11-21 ", false},
		{"+026-11-21", false},
		{"2026-11-21T00:00:00Z", false},
		{"", false},
	}
	for _, tt := range tests {
		d, err := ParseDate(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseDate(%q) = %v, %v; want ok=%v", tt.in, d, err, tt.ok)
		}
		if err != nil && codeOf(err) != "invalid_date" {
			t.Errorf("ParseDate(%q): code %q", tt.in, codeOf(err))
		}
		if err == nil && d.Format(time.DateOnly) != tt.in {
			t.Errorf("ParseDate(%q) = %v", tt.in, d)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]logging.Level{"debug": logging.LevelDebug, "info": logging.LevelInfo,
		"warn": logging.LevelWarn, "error": logging.LevelError} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"trace", "INFO", "Info", "info ", "warning", "", "info.log", "../info", "0"} {
		if _, err := ParseLevel(in); codeOf(err) != "invalid_level" {
			t.Errorf("ParseLevel(%q): %v, want invalid_level", in, err)
		}
	}
}

func TestParseDays(t *testing.T) {
	tests := []struct {
		in      string
		present bool
		want    int
		ok      bool
	}{
		{"", false, 7, true},
		{"1", true, 1, true},
		{"90", true, 90, true},
		{"366", true, 366, true},
		{"0", true, 0, false},
		{"-1", true, 0, false},
		{"367", true, 0, false},
		{"abc", true, 0, false},
		{"", true, 0, false},
		{"+5", true, 0, false},
		{"07", true, 0, false},
		{"7.0", true, 0, false},
		{"1e2", true, 0, false},
		{"99999999999999999999", true, 0, false},
	}
	for _, tt := range tests {
		got, err := ParseDays(tt.in, tt.present)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDays(%q, %v) = %d, %v; want %d ok=%v", tt.in, tt.present, got, err, tt.want, tt.ok)
		}
		if err != nil && codeOf(err) != "invalid_days" {
			t.Errorf("ParseDays(%q): code %q", tt.in, codeOf(err))
		}
	}
}

// noPathChars: what an accepted value may never contain, since dates and
// weeks become file names.
func noPathChars(t *testing.T, s string) {
	t.Helper()
	if strings.ContainsAny(s, "/\\.\x00") {
		t.Fatalf("accepted %q", s)
	}
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2026-11-21", "2026-02-30", "../../etc/x", "2026-11-21/.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDate(s)
		if err != nil {
			return
		}
		noPathChars(t, s)
		if d.Format(time.DateOnly) != s { // accepted text is canonical: it is the file name
			t.Fatalf("%q parsed as %v", s, d)
		}
	})
}

func FuzzParseLevel(f *testing.F) {
	for _, s := range []string{"info", "trace", "warn/..", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLevel(s)
		if err != nil {
			return
		}
		noPathChars(t, s)
		if l.String() != s {
			t.Fatalf("%q parsed as %v", s, l)
		}
	})
}

func FuzzParseDays(f *testing.F) {
	for _, s := range []string{"7", "0", "-1", "367", "abc", "+5", "07"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseDays(s, true)
		if err != nil {
			return
		}
		if n < 1 || n > maxDays || strconv.Itoa(n) != s {
			t.Fatalf("%q accepted as %d", s, n)
		}
	})
}
