package bridge

import (
	"slices"
	"testing"
)

func TestStatusSent(t *testing.T) {
	for s, want := range map[Status]bool{
		StatusQueued: false, StatusSent: true, StatusDelivered: true, StatusRead: true, StatusFailed: false, "bogus": false,
	} {
		if got := s.Sent(); got != want {
			t.Errorf("%q.Sent() = %v, want %v", s, got, want)
		}
	}
}

// Through lists the statuses a move passes, in order; none for a move
// backwards or out of Failed.
func TestStatusThrough(t *testing.T) {
	for _, c := range []struct {
		from, to Status
		want     []Status
	}{
		{StatusQueued, StatusSent, []Status{StatusSent}},
		{StatusQueued, StatusDelivered, []Status{StatusSent, StatusDelivered}},
		{StatusQueued, StatusRead, []Status{StatusSent, StatusDelivered, StatusRead}},
		{StatusSent, StatusRead, []Status{StatusDelivered, StatusRead}},
		{StatusQueued, StatusFailed, []Status{StatusFailed}},
		{StatusRead, StatusDelivered, nil},
		{StatusFailed, StatusSent, nil},
		{StatusSent, StatusFailed, nil},
	} {
		if got := c.from.Through(c.to); !slices.Equal(got, c.want) {
			t.Errorf("%s -> %s passes %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
