package notify

import "testing"

// A subscriber holds one pending signal for any number of changes, and
// hears nothing after it unsubscribed; Notify never blocks.
func TestChangesCoalesceAndEnd(t *testing.T) {
	var c Changes
	ch, cancel := c.Subscribe()
	other, cancelOther := c.Subscribe()
	defer cancelOther()
	c.Notify()
	c.Notify()
	if len(ch) != 1 || len(other) != 1 {
		t.Fatalf("pending signals %d and %d, want one each", len(ch), len(other))
	}
	<-ch
	cancel()
	c.Notify()
	if len(ch) != 0 {
		t.Error("a signal after unsubscribing")
	}
}
