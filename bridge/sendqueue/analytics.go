package sendqueue

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Analytics reads the delivery analytics from bridge.db.
type Analytics struct {
	DB *sql.DB
}

// DeliveryDays reads the days UTC days ending with today's (the day of now)
// from delivery_daily, the rollup the queue updates in the same transaction
// as each status change; days without a row are zeros. Reading at most 366
// rows by primary key keeps this fast however long the message log grows;
// counting the messages table instead is what BenchmarkDeliveryAnalytics
// compares it to.
func (a Analytics) DeliveryDays(ctx context.Context, now time.Time, days int) ([]bridge.DeliveryDay, error) {
	out := DeliveryDays(now, days)
	if len(out) == 0 {
		return out, nil
	}
	first, last := out[0].Day.Format(time.DateOnly), out[len(out)-1].Day.Format(time.DateOnly)
	rows, err := a.DB.QueryContext(ctx, `SELECT day, success, failed FROM delivery_daily
		WHERE day BETWEEN ? AND ? ORDER BY day`, first, last)
	if err != nil {
		return nil, fmt.Errorf("read delivery_daily: %w", err)
	}
	defer func() { _ = rows.Close() }()
	byDay := make(map[string]*bridge.DeliveryDay, len(out))
	for i := range out {
		byDay[out[i].Day.Format(time.DateOnly)] = &out[i]
	}
	for rows.Next() {
		var day string
		var success, failed int64
		if err := rows.Scan(&day, &success, &failed); err != nil {
			return nil, fmt.Errorf("read delivery_daily: %w", err)
		}
		if d := byDay[day]; d != nil {
			d.Success, d.Failed = success, failed
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read delivery_daily: %w", err)
	}
	return out, nil
}

// DeliveryDays lists the days UTC days ending with now's, oldest first,
// every count zero: the frame an analytics source fills, so that days
// without traffic are still listed.
func DeliveryDays(now time.Time, days int) []bridge.DeliveryDay {
	y, m, d := now.UTC().Date()
	last := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	out := make([]bridge.DeliveryDay, max(days, 0))
	for i := range out {
		out[i].Day = last.AddDate(0, 0, i-(days-1))
	}
	return out
}
