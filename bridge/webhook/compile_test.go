package webhook

import (
	"fmt"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// Delivering events compiles no statement per event once warm: the scan
// that follows every delivery's end, the next head's due time, the
// outcome's write and the pending count that every scrape of /metrics
// reads are prepared once per connection (issue 47: the scan was prepared,
// and with its bound LIMIT planned, again at every delivery). 200 events
// of 4 chats, each committed on its own as incoming messages are in a
// slow stream, compile nothing a tenth as often as there are events.
func TestDeliveryCompilesNothingPerEvent(t *testing.T) {
	compiles := testutil.WatchCompiles()
	r := newReceiver(t, false)
	o := startOutbox(t, r.srv.URL, nil)
	event := func(i int) Event {
		return inChat(bridge.PhoneRecipient(fmt.Sprintf("49151000020%02d", i%4)), i)
	}
	for i := range 4 { // warm: every statement prepared
		o.enqueue(t, event(i))
	}
	r.waitCount(t, 4, 10*time.Second)
	o.waitDrained(t, 10*time.Second)
	before := compiles.Snapshot()
	const events = 200
	for i := 4; i < 4+events; i++ {
		o.enqueue(t, event(i))
	}
	r.waitCount(t, 4+events, 30*time.Second)
	o.waitDrained(t, 10*time.Second)
	compiles.AtMost(t, before, events/10, fmt.Sprintf("%d events delivered", events))
}
