package webhook

import (
	"fmt"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// BenchmarkRecentEvents is the dashboard's read of calls and blocks on a
// full event log (recentWindow events, 1 in 100 a call), beside the
// stream's read of as many events after an id (EventsAfter) as baseline.
func BenchmarkRecentEvents(b *testing.B) {
	o := openOutbox(b, "", nil)
	alice := bridge.PhoneRecipient("4915100000002")
	at := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	for chunk := range recentWindow / 1000 {
		evs := make([]Event, 0, 1000)
		for i := range 1000 {
			if i%100 == 0 {
				evs = append(evs, CallEvent(bridge.Call{ID: fmt.Sprint(chunk, i), From: alice, At: at}))
				continue
			}
			evs = append(evs, ContactIdentity(bridge.ContactIdentity{Phone: alice, LID: alice, At: at}))
		}
		o.enqueue(b, evs...)
	}
	types := []string{TypeCallOffer, TypeCallEnded, TypeContactBlocked}
	b.Run("RecentEvents", func(b *testing.B) {
		for b.Loop() {
			if got, err := o.RecentEvents(b.Context(), types, 200); err != nil || len(got) != 200 {
				b.Fatal(len(got), err)
			}
		}
	})
	b.Run("EventsAfter200", func(b *testing.B) {
		newest, _ := o.LatestEventID(b.Context())
		for b.Loop() {
			if got, err := o.EventsAfter(b.Context(), newest-200, 200); err != nil || len(got) != 200 {
				b.Fatal(len(got), err)
			}
		}
	})
}
