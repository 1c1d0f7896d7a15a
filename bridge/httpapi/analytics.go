package httpapi

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
)

// DeliveryDay is one UTC day of the delivery analytics.
type DeliveryDay struct {
	Day     string `json:"day"` // YYYY-MM-DD
	Success int64  `json:"success"`
	Failed  int64  `json:"failed"`
}

// DeliveryAnalyticsHandler serves GET /api/admin/analytics/delivery?days=N
// (1-366, default 7) from db, bridge.db: the last N UTC days up to today,
// oldest first, days without traffic included as zeros.
func DeliveryAnalyticsHandler(db *sql.DB, now func() time.Time, logger logr.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := strictQuery(r, "days")
		if err != nil {
			writeFailure(w, logger, "delivery analytics", err)
			return
		}
		s, present := q["days"]
		days, err := parseDays(s, present)
		if err != nil {
			writeFailure(w, logger, "delivery analytics", err)
			return
		}
		out, err := DeliveryDays(r.Context(), db, now(), days)
		if err != nil {
			writeFailure(w, logger, "delivery analytics", err)
			return
		}
		Write(w, http.StatusOK, out)
	})
}

// DeliveryDays reads the days UTC days ending with today's (the day of now)
// from delivery_daily, the rollup the send queue updates in the same
// transaction as each status change. Reading at most 366 rows by primary
// key keeps this fast however long the message log grows; counting the
// messages table instead is what BenchmarkDeliveryAnalytics compares it to.
func DeliveryDays(ctx context.Context, db *sql.DB, now time.Time, days int) ([]DeliveryDay, error) {
	first, last := window(now, days)
	rows, err := db.QueryContext(ctx, `SELECT day, success, failed FROM delivery_daily
		WHERE day BETWEEN ? AND ? ORDER BY day`, first.Format(time.DateOnly), last.Format(time.DateOnly))
	if err != nil {
		return nil, fmt.Errorf("read delivery_daily: %w", err)
	}
	defer func() { _ = rows.Close() }()
	counts := make(map[string]DeliveryDay, days)
	for rows.Next() {
		var d DeliveryDay
		if err := rows.Scan(&d.Day, &d.Success, &d.Failed); err != nil {
			return nil, fmt.Errorf("read delivery_daily: %w", err)
		}
		counts[d.Day] = d
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read delivery_daily: %w", err)
	}
	return fillDays(first, days, counts), nil
}

// window returns the first and last UTC midnights of the days days ending
// with now's.
func window(now time.Time, days int) (first, last time.Time) {
	y, m, d := now.UTC().Date()
	last = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return last.AddDate(0, 0, -(days - 1)), last
}

// fillDays lists every day from first on, taking its counts from counts
// (keyed YYYY-MM-DD) and zeros where it has none.
func fillDays(first time.Time, days int, counts map[string]DeliveryDay) []DeliveryDay {
	out := make([]DeliveryDay, days)
	for i := range out {
		day := first.AddDate(0, 0, i).Format(time.DateOnly)
		c := counts[day]
		out[i] = DeliveryDay{Day: day, Success: c.Success, Failed: c.Failed}
	}
	return out
}
