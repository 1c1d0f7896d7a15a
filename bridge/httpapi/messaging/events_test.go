package messaging

import (
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

func FuzzParseStreamQuery(f *testing.F) {
	for _, s := range []string{"", "message.upsert", "message.upsert,message.status", ",", "x", "12", "-3", "99999999999999999999"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, events, last string) {
		q, err := parseStreamQuery(events, last)
		if err != nil {
			if e := bridge.ErrorOf(err); e.Kind != bridge.KindInvalid {
				t.Fatalf("%q %q: %v", events, last, err)
			}
			return
		}
		if last != "" && q.after < 0 {
			t.Fatalf("%q accepted as %d", last, q.after)
		}
	})
}
