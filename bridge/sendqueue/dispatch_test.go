package sendqueue

import (
	"errors"
	"testing"
)

func TestStatusesOnlyMoveForward(t *testing.T) {
	cases := []struct {
		from, to Status
		want     bool
	}{
		{StatusQueued, StatusSent, true},
		{StatusQueued, StatusDelivered, true},
		{StatusQueued, StatusRead, true},
		{StatusSent, StatusDelivered, true},
		{StatusDelivered, StatusRead, true},
		{StatusRead, StatusDelivered, false}, // a late Delivered after Read
		{StatusDelivered, StatusDelivered, false},
		{StatusSent, StatusQueued, false},
		{StatusFailed, StatusDelivered, false},
		{StatusQueued, StatusFailed, false}, // only the queue fails a message, never a receipt
	}
	for _, c := range cases {
		if got := advances(c.from, c.to); got != c.want {
			t.Errorf("advances(%s, %s) = %v", c.from, c.to, got)
		}
	}
}

func TestParseStatus(t *testing.T) {
	for _, s := range []string{"Queued", "Sent", "Delivered", "Read", "Failed"} {
		if st, ok := ParseStatus(s); !ok || string(st) != s {
			t.Errorf("ParseStatus(%q) = %q, %v", s, st, ok)
		}
	}
	for _, s := range []string{"", "queued", "Sending", "READ"} {
		if _, ok := ParseStatus(s); ok {
			t.Errorf("ParseStatus(%q) accepted", s)
		}
	}
}

func TestCursorRoundTrip(t *testing.T) {
	c := encodeCursor(1763719200123, "01a1feec-dd6c-7c06-8391-dc126fc74f67")
	ms, id, err := decodeCursor(c)
	if err != nil || ms != 1763719200123 || id != "01a1feec-dd6c-7c06-8391-dc126fc74f67" {
		t.Fatalf("%d %q %v", ms, id, err)
	}
	for _, bad := range []string{"", "!!", "bm9jb2xvbg", "MTIzOg"} { // "nocolon", "123:"
		if _, _, err := decodeCursor(bad); !errors.Is(err, ErrBadCursor) {
			t.Errorf("decodeCursor(%q): %v", bad, err)
		}
	}
}

// FuzzDecodeCursor: a client controls the cursor; it must decode or be
// ErrBadCursor, and what decodes encodes back to itself.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor(1, "a"))
	f.Add("")
	f.Fuzz(func(t *testing.T, c string) {
		ms, id, err := decodeCursor(c)
		if err != nil {
			if !errors.Is(err, ErrBadCursor) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if again, id2, err := decodeCursor(encodeCursor(ms, id)); err != nil || again != ms || id2 != id {
			t.Fatalf("round trip of %q: %d %q %v", c, again, id2, err)
		}
	})
}
