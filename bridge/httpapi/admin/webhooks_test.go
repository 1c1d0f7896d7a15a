package admin

import (
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// FuzzParseSince: what is accepted is an RFC 3339 time not after now.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"2026-11-21T10:00:00Z", "2026-11-21T10:00:00.123+01:00", "2026-11-21", "2099-01-01T00:00:00Z",
		"", "2026-11-21t10:00:00z", "2026-02-30T10:00:00Z", "9999-12-31T23:59:60Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		since, err := parseSince(s, true, saturday)
		if err != nil {
			if e := bridge.ErrorOf(err); e.Kind != bridge.KindInvalid || e.Code != "invalid_since" {
				t.Fatalf("%q: error %v", s, err)
			}
			return
		}
		if since.After(saturday) {
			t.Fatalf("%q: %s is in the future", s, since)
		}
		if again, err := time.Parse(time.RFC3339, s); err != nil || !again.Equal(since) {
			t.Fatalf("%q accepted as %s", s, since)
		}
	})
}
