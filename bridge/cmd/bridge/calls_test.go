package main

import (
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// A caller who rings again the same day is answered once; the next day,
// or another caller, again.
func TestCallReplyOncePerCallerAndDay(t *testing.T) {
	ana, bob := bridge.PhoneRecipient("4915100000002"), bridge.PhoneRecipient("4915100000003")
	morning := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	first := callReplyKey(bridge.Call{ID: "A1", From: ana, At: morning})
	if again := callReplyKey(bridge.Call{ID: "A2", From: ana, At: morning.Add(15 * time.Hour)}); again != first {
		t.Errorf("the same caller the same day: %q, then %q", first, again)
	}
	for _, other := range []bridge.Call{{ID: "A3", From: ana, At: morning.Add(24 * time.Hour)}, {ID: "B1", From: bob, At: morning}} {
		if k := callReplyKey(other); k == first {
			t.Errorf("%+v answered under the key of the first call, %q", other, k)
		}
	}
}
