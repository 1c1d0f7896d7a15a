package audit

import (
	"testing"
	"time"
)

func TestParseWeek(t *testing.T) {
	tests := []struct {
		in   string
		want Week
		ok   bool
	}{
		{"2026-W47", Week{2026, 47}, true},
		{"2026-W01", Week{2026, 1}, true},
		{"2020-W53", Week{2020, 53}, true}, // 2020-01-01 is a Wednesday in a leap year
		{"2026-W53", Week{2026, 53}, true}, // 2026-01-01 is a Thursday
		{"2015-W53", Week{2015, 53}, true}, // Thursday
		{"2004-W53", Week{2004, 53}, true}, // Thursday, leap
		{"2021-W53", Week{}, false},        // Friday
		{"2024-W53", Week{}, false},        // Monday, leap
		{"2027-W53", Week{}, false},        // Friday
		{"2026-W00", Week{}, false},
		{"2026-W54", Week{}, false},
		{"2026-W60", Week{}, false},
		{"2026-w47", Week{}, false},
		{"2026W47", Week{}, false},
		{"2026-W4", Week{}, false},
		{"2026-W047", Week{}, false},
		{"2026-W47-1", Week{}, false},
		{" 2026-W47", Week{}, false},
		{"2026-W+7", Week{}, false},
		{"+026-W47", Week{}, false},
		{"../W47.db", Week{}, false},
		{"2026-W4/", Week{}, false},
		{"2026-W4.", Week{}, false},
		{"", Week{}, false},
	}
	for _, tt := range tests {
		got, err := ParseWeek(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseWeek(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// WeeksIn uses the January 1st rule; the calendar's own ISOWeek of December
// 28th (always in the year's last week) is an independent check.
func TestWeeksInAgreesWithTheCalendar(t *testing.T) {
	for year := 1900; year <= 2400; year++ {
		_, last := time.Date(year, time.December, 28, 0, 0, 0, 0, time.UTC).ISOWeek()
		if got := WeeksIn(year); got != last {
			t.Errorf("WeeksIn(%d) = %d, calendar says %d", year, got, last)
		}
	}
}

func TestWeekOfAndStartAgree(t *testing.T) {
	for day := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC); day.Year() < 2031; day = day.AddDate(0, 0, 1) {
		w := WeekOf(day.Add(13 * time.Hour))
		start := w.Start()
		if day.Before(start) || !day.Before(start.AddDate(0, 0, 7)) || start.Weekday() != time.Monday {
			t.Fatalf("%s: week %s starts %s", day.Format(time.DateOnly), w, start)
		}
		if back, err := ParseWeek(w.String()); err != nil || back != w {
			t.Fatalf("%s does not round-trip: %v %v", w, back, err)
		}
	}
}

func TestWeekOfAtYearBoundaries(t *testing.T) {
	tests := []struct {
		day  string
		want string
	}{
		{"2027-01-01", "2026-W53"},
		{"2027-01-03", "2026-W53"},
		{"2027-01-04", "2027-W01"},
		{"2024-12-30", "2025-W01"},
		{"2026-11-21", "2026-W47"},
	}
	for _, tt := range tests {
		d, _ := time.Parse(time.DateOnly, tt.day)
		if got := WeekOf(d).String(); got != tt.want {
			t.Errorf("WeekOf(%s) = %s, want %s", tt.day, got, tt.want)
		}
	}
	// The UTC date counts, not the clock's zone: Monday 00:30 in UTC+2 is
	// still Sunday in UTC.
	local := time.Date(2027, 1, 4, 0, 30, 0, 0, time.FixedZone("EET", 2*3600))
	if got := WeekOf(local).String(); got != "2026-W53" {
		t.Errorf("WeekOf(%s) = %s, want 2026-W53", local, got)
	}
}

func FuzzParseWeek(f *testing.F) {
	for _, s := range []string{"2026-W47", "2020-W53", "2021-W53", "2026-W00", "../x", "2026-W4."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWeek(s)
		if err != nil {
			return
		}
		// Whatever is accepted is canonical (it names a file) and real.
		if w.String() != s {
			t.Fatalf("%q parsed as %s", s, w)
		}
		if w.Num < 1 || w.Num > WeeksIn(w.Year) {
			t.Fatalf("%q: week %d does not exist", s, w.Num)
		}
		if got := WeekOf(w.Start()); got != w {
			t.Fatalf("%q starts %s, which is in %s", s, w.Start(), got)
		}
	})
}
