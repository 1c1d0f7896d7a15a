package inbox

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Each voter's latest vote is their current one: a later vote replaces
// it, a vote delivered late (sent before the one stored) does not, and a
// vote taken back chooses nothing. A vote WhatsApp delivers again is
// stored once.
func TestVotesKeepEachVotersLatest(t *testing.T) {
	f := newFixture(t, "")
	ben := bridge.PhoneRecipient("4915100000009")
	vote := func(id string, from bridge.Recipient, sent time.Duration, options ...string) {
		f.store(t, bridge.Incoming{WhatsAppID: id, From: from, Chat: from, Type: bridge.IncomingPollVote,
			TargetID: "POLL1", Votes: options, Timestamp: start.Add(sent)})
	}
	current := func() string {
		t.Helper()
		votes, err := f.Votes(context.Background(), "POLL1")
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(votes)
	}
	vote("V1", ana, time.Second, "Red")
	vote("V2", ben, 2*time.Second, "Red", "Blue")
	vote("V3", ana, 3*time.Second, "Green")
	vote("V0", ana, 0, "Blue") // sent before V1 and V3, delivered last
	vote("V2", ben, 2*time.Second, "Red", "Blue")
	want := fmt.Sprint([]bridge.PollVote{{Voter: ben, Options: []string{"Red", "Blue"}}, {Voter: ana, Options: []string{"Green"}}})
	if got := current(); got != want {
		t.Errorf("votes %s, want %s", got, want)
	}
	vote("V4", ben, 4*time.Second)
	want = fmt.Sprint([]bridge.PollVote{{Voter: ana, Options: []string{"Green"}}, {Voter: ben, Options: []string{}}})
	if got := current(); got != want {
		t.Errorf("after a vote taken back: %s, want %s", got, want)
	}
	if votes, err := f.Votes(context.Background(), "POLL2"); err != nil || len(votes) != 0 {
		t.Errorf("votes on another poll: %v %v", votes, err)
	}
}

// The retention sweeps votes with the incoming history that carried them:
// a vote older than the retention leaves the tally, a recent one (on the
// same poll or another) stays.
func TestSweepTakesOldVotes(t *testing.T) {
	f := newFixture(t, "")
	ben := bridge.PhoneRecipient("4915100000009")
	vote := func(id, poll string, from bridge.Recipient, sent time.Time) {
		f.store(t, bridge.Incoming{WhatsAppID: id, From: from, Chat: from, Type: bridge.IncomingPollVote,
			TargetID: poll, Votes: []string{"Red"}, Timestamp: sent})
	}
	vote("V1", "POLL1", ana, start)
	vote("V2", "POLL2", ana, start)
	f.clock.set(start.Add(time.Hour))
	vote("V3", "POLL1", ben, start.Add(time.Hour))
	f.clock.set(start.Add(f.opts.Retention + time.Minute))
	if n, err := f.Sweep(context.Background()); err != nil || n != 4 {
		t.Fatalf("swept %d, %v; want 4 (two entries and their two votes)", n, err)
	}
	for poll, want := range map[string]string{"POLL1": fmt.Sprint([]bridge.PollVote{{Voter: ben, Options: []string{"Red"}}}), "POLL2": "[]"} {
		votes, err := f.Votes(context.Background(), poll)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(votes); got != want {
			t.Errorf("votes on %s after the sweep: %s, want %s", poll, got, want)
		}
	}
}
