package bridge

import "testing"

func TestStatusSent(t *testing.T) {
	for s, want := range map[Status]bool{
		StatusQueued: false, StatusSent: true, StatusDelivered: true, StatusRead: true, StatusFailed: false, "bogus": false,
	} {
		if got := s.Sent(); got != want {
			t.Errorf("%q.Sent() = %v, want %v", s, got, want)
		}
	}
}
