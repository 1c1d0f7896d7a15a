package bridge

import "time"

// DeliveryDay counts the outgoing messages whose delivery ended on one UTC
// day: sent (whatever receipts followed) or failed for good.
type DeliveryDay struct {
	Day     time.Time // the day's UTC midnight
	Success int64
	Failed  int64
}
