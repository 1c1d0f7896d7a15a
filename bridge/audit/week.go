package audit

import (
	"errors"
	"fmt"
	"time"
)

// Week is an ISO 8601 week: weeks start on Monday, and week 1 of a year is
// the one holding its first Thursday, so a week belongs wholly to one
// week-numbering year (2027-01-01 is in 2026-W53).
type Week struct {
	Year int // the ISO week-numbering year, not always the calendar year
	Num  int // 1-52, or 53 in a year that has it
}

// WeekOf returns the ISO week holding t's UTC date.
func WeekOf(t time.Time) Week {
	y, w := t.UTC().ISOWeek()
	return Week{Year: y, Num: w}
}

// String is the week as the API and the file names spell it: 2026-W47.
func (w Week) String() string { return fmt.Sprintf("%04d-W%02d", w.Year, w.Num) }

// Start is the Monday 00:00 UTC that begins w.
func (w Week) Start() time.Time {
	// January 4th is always in week 1; step back to its Monday.
	jan4 := time.Date(w.Year, time.January, 4, 0, 0, 0, 0, time.UTC)
	monday := jan4.AddDate(0, 0, -((int(jan4.Weekday()) + 6) % 7))
	return monday.AddDate(0, 0, 7*(w.Num-1))
}

// WeeksIn returns how many ISO weeks year has: 53 when January 1st is a
// Thursday, or a Wednesday in a leap year; 52 otherwise.
func WeeksIn(year int) int {
	jan1 := time.Date(year, time.January, 1, 0, 0, 0, 0, time.UTC).Weekday()
	leap := time.Date(year, time.December, 31, 0, 0, 0, 0, time.UTC).YearDay() == 366
	if jan1 == time.Thursday || (leap && jan1 == time.Wednesday) {
		return 53
	}
	return 52
}

var errWeek = errors.New("week must be YYYY-Www, an ISO 8601 week (W01-W52, or W53 in a year that has one)")

// ParseWeek accepts exactly YYYY-Www: four digits, "-W", two digits, and a
// week the year has. Nothing else is accepted (no lower-case w, no
// YYYYWww, no day suffix), since the text becomes part of a file name.
func ParseWeek(s string) (Week, error) {
	if len(s) != len("2026-W47") || s[4] != '-' || s[5] != 'W' {
		return Week{}, errWeek
	}
	year, ok := digits(s[:4])
	if !ok {
		return Week{}, errWeek
	}
	num, ok := digits(s[6:])
	if !ok || num < 1 || num > WeeksIn(year) {
		return Week{}, errWeek
	}
	return Week{Year: year, Num: num}, nil
}

// digits parses s when it is only ASCII digits (strconv would also take a
// sign).
func digits(s string) (int, bool) {
	n := 0
	for i := range len(s) {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, s != ""
}
