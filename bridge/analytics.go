package bridge

import "time"

// DeliveryDay counts the outgoing messages whose delivery ended on one UTC
// day: sent (whatever receipts followed) or failed for good.
type DeliveryDay struct {
	Day     time.Time // the day's UTC midnight
	Success int64
	Failed  int64
}

// DeliveryDays lists the days UTC days ending with now's, oldest first,
// every count zero: the frame an analytics source fills, so that days
// without traffic are still listed.
func DeliveryDays(now time.Time, days int) []DeliveryDay {
	y, m, d := now.UTC().Date()
	last := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	out := make([]DeliveryDay, max(days, 0))
	for i := range out {
		out[i].Day = last.AddDate(0, 0, i-(days-1))
	}
	return out
}
