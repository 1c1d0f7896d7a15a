package sendqueue

import (
	"testing"
	"time"
)

func TestDeliveryDaysFrame(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	for _, c := range []struct {
		now         time.Time
		days        int
		first, last string
	}{
		{time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), 1, "2026-11-21", "2026-11-21"},
		{time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), 7, "2026-11-15", "2026-11-21"},
		{time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), 2, "2026-02-28", "2026-03-01"},
		{time.Date(2026, 11, 22, 0, 30, 0, 0, berlin), 1, "2026-11-21", "2026-11-21"}, // UTC's day
		{time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), 366, "2025-11-21", "2026-11-21"},
	} {
		out := DeliveryDays(c.now, c.days)
		if len(out) != c.days || out[0].Day.Format(time.DateOnly) != c.first || out[len(out)-1].Day.Format(time.DateOnly) != c.last {
			t.Errorf("DeliveryDays(%v, %d): %d days %v .. %v", c.now, c.days, len(out), out[0].Day, out[len(out)-1].Day)
		}
		for i, d := range out {
			if d.Success != 0 || d.Failed != 0 || d.Day.Location() != time.UTC || (i > 0 && d.Day.Sub(out[i-1].Day) != 24*time.Hour) {
				t.Fatalf("DeliveryDays(%v, %d)[%d] = %+v", c.now, c.days, i, d)
			}
		}
	}
	if out := DeliveryDays(time.Now(), 0); len(out) != 0 {
		t.Errorf("0 days: %v", out)
	}
}
