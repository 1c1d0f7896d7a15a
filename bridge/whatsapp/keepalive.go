package whatsapp

import (
	"time"

	"go.mau.fi/whatsmeow"
)

// TuneKeepAlive sets whatsmeow's keepalive cadence from the heartbeat
// interval. whatsmeow sends no event for a keepalive that succeeds, only
// KeepAliveTimeout and KeepAliveRestored, so the heartbeat can only be as
// fresh as the keepalive is frequent: with a ping at least every interval and
// a response deadline of half an interval (at most whatsmeow's 10 s), a dead
// socket stops the heartbeat within about 2.5 intervals, inside the 3 the
// operator allows.
//
// These are process-wide variables of whatsmeow and this is their one
// writer (the simulator's tests call it too): call TuneKeepAlive once, before
// any client starts (the race detector flags a later write).
func TuneKeepAlive(heartbeat time.Duration) {
	whatsmeow.KeepAliveIntervalMax = heartbeat
	whatsmeow.KeepAliveIntervalMin = heartbeat * 2 / 3
	whatsmeow.KeepAliveResponseDeadline = min(heartbeat/2, 10*time.Second)
}
