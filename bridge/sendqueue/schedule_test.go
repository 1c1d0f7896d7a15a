package sendqueue

import (
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// A message goes no earlier than now, its due time, the pace's next slot
// and a restriction's end, plus one mean paced gap (1.25 intervals) for
// each message ahead of it.
func TestScheduledAt(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	for _, c := range []struct {
		name            string
		due, pace, held time.Time
		ahead           int
		interval        time.Duration
		want            time.Time
	}{
		{"due now, unpaced", now, time.Time{}, time.Time{}, 0, 0, now},
		{"overdue", at(-5), time.Time{}, time.Time{}, 0, 0, now},
		{"the pace's next slot", now, at(2), time.Time{}, 0, 3 * time.Second, at(2)},
		{"two ahead at 20/m", now, at(2), time.Time{}, 2, 3 * time.Second, at(2).Add(2 * 3750 * time.Millisecond)},
		{"a retry later than the pace", at(15), at(2), time.Time{}, 0, 3 * time.Second, at(15)},
		{"a restriction", now, at(2), at(60), 1, 3 * time.Second, at(60).Add(3750 * time.Millisecond)},
	} {
		if got := scheduledAt(now, c.due, c.pace, c.held, c.ahead, c.interval); !got.Equal(c.want) {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// Accepted while the pace holds the queue, each Queued message gets its
// place, one after the other, and a later expected time than the one before
// it; the message sent at once gets none.
func TestSubmitPlaces(t *testing.T) {
	f := newFixture(t, time.Hour)
	f.reopen(func(_ *MessageLogOptions, o *Options) { o.Rate = bridge.SendRate{N: 1, Per: time.Minute} })
	before := time.Now()
	res := f.submit(textRequest("one", "two", "three"))
	if res.Messages[0].Status != bridge.StatusSent || res.Places[0] != (Place{}) {
		t.Fatalf("first: %+v %+v", res.Messages[0], res.Places[0])
	}
	for i := 1; i < 3; i++ {
		p := res.Places[i]
		if p.Position != i {
			t.Errorf("message %d at position %d, want %d", i, p.Position, i)
		}
		// The first waits for the pace's next slot, a minute or more after
		// the attempt; each later one a mean gap (75 s) after it.
		low := before.Add(time.Minute + time.Duration(i-1)*75*time.Second)
		if p.ScheduledAt.Before(low) || p.ScheduledAt.After(low.Add(45*time.Second)) {
			t.Errorf("message %d scheduled at %s, want within [%s, +45s]", i, p.ScheduledAt, low)
		}
	}
	more := f.submit(textRequest("four"))
	if p := more.Places[0]; p.Position != 3 || !p.ScheduledAt.After(res.Places[2].ScheduledAt) {
		t.Errorf("a later request: %+v after %+v", p, res.Places[2])
	}
	pace, err := f.q.Pace(t.Context())
	if err != nil || pace.Depth != 3 || pace.Rate.String() != "1/m" || !pace.NextSendAt.Equal(res.Places[1].ScheduledAt) {
		t.Errorf("pace %+v, %v; want 3 waiting, 1/m, next at %s", pace, err, res.Places[1].ScheduledAt)
	}
}

// Places are counted up to maxCountedAhead messages ahead: a longer queue
// answers maxCountedAhead+1 instead of scanning all of it on every answer.
func TestPlacesAreCountedUpToABound(t *testing.T) {
	f := newFixture(t, time.Hour)
	f.reopen(func(_ *MessageLogOptions, o *Options) { o.Rate = bridge.SendRate{N: 1, Per: time.Hour} })
	texts := make([]string, maxCountedAhead+3)
	for i := range texts {
		texts[i] = "queued"
	}
	res := f.submit(textRequest(texts...))
	for i, p := range res.Places[1:] {
		if want := min(i+1, maxCountedAhead+1); p.Position != want {
			t.Fatalf("message %d at position %d, want %d", i+1, p.Position, want)
		}
	}
}
