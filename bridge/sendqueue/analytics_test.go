package sendqueue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The delivery analytics read the delivery_daily rollup of a real bridge.db.
func TestDeliveryDays(t *testing.T) {
	ctx := context.Background()
	db := testutil.OpenBridgeDB(t)
	for day, counts := range map[string][2]int{
		"2026-11-21": {12, 1}, // today
		"2026-11-19": {5, 0},
		"2026-11-14": {9, 9}, // 8 days ago: outside the default window
		"2026-11-22": {1, 1}, // tomorrow (a clock skew): never shown
	} {
		if _, err := db.Exec(`INSERT INTO delivery_daily (day, success, failed) VALUES (?, ?, ?)`, day, counts[0], counts[1]); err != nil {
			t.Fatal(err)
		}
	}
	a := sendqueue.Analytics{DB: db}
	saturday := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	get := func(now time.Time, days int) string {
		t.Helper()
		out, err := a.DeliveryDays(ctx, now, days)
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, d := range out {
			s += fmt.Sprintf("%s %d %d;", d.Day.Format(time.DateOnly), d.Success, d.Failed)
		}
		return s
	}
	if got, want := get(saturday, 3), "2026-11-19 5 0;2026-11-20 0 0;2026-11-21 12 1;"; got != want {
		t.Errorf("3 days\n got %s\nwant %s", got, want)
	}
	if got, want := get(saturday, 8), "2026-11-14 9 9;2026-11-15 0 0;2026-11-16 0 0;2026-11-17 0 0;2026-11-18 0 0;"+
		"2026-11-19 5 0;2026-11-20 0 0;2026-11-21 12 1;"; got != want {
		t.Errorf("8 days\n got %s\nwant %s", got, want)
	}
	year, err := a.DeliveryDays(ctx, saturday, 366)
	if err != nil || len(year) != 366 || year[0].Day.Format(time.DateOnly) != "2025-11-21" || year[365].Success != 12 {
		t.Errorf("366 days: %d days from %v, %v", len(year), year[0].Day, err)
	}
	// The day is UTC's: 00:30 in Berlin is still yesterday here.
	if got, want := get(time.Date(2026, 11, 22, 0, 30, 0, 0, time.FixedZone("CET", 3600)), 1), "2026-11-21 12 1;"; got != want {
		t.Errorf("1 day at 23:30 UTC: %s, want %s", got, want)
	}
}
