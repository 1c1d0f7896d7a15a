package bridge

import "time"

// TimeLayout is every timestamp the bridge writes for clients: RFC 3339 in
// UTC with milliseconds, 2026-11-21T10:00:00.000Z.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime formats t in TimeLayout, in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }
