package bridge_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/msgbridge/msgbridge/bridge"
)

func TestValidatePoll(t *testing.T) {
	two := []string{"Yes", "No"}
	n := func(i int) *int { return &i }
	cases := []struct {
		d    bridge.PollDraft
		code string
	}{
		{bridge.PollDraft{Question: "Coming?", Options: two}, ""},
		{bridge.PollDraft{Question: "Coming?", Options: two, Selectable: n(2)}, ""},
		{bridge.PollDraft{Question: strings.Repeat("é", 255), Options: []string{strings.Repeat("ö", 100), "b"}}, ""},
		{bridge.PollDraft{Question: "", Options: two}, "invalid_poll_question"},
		{bridge.PollDraft{Question: strings.Repeat("é", 256), Options: two}, "invalid_poll_question"},
		{bridge.PollDraft{Question: "q\x00", Options: two}, "invalid_poll_question"},
		{bridge.PollDraft{Question: "q", Options: []string{"a"}}, "invalid_poll_options"},
		{bridge.PollDraft{Question: "q", Options: strings.Split("abcdefghijklm", "")}, "invalid_poll_options"},
		{bridge.PollDraft{Question: "q", Options: []string{"a", "\t"}}, "invalid_poll_option"},
		{bridge.PollDraft{Question: "q", Options: []string{"a", "\xff"}}, "invalid_poll_option"},
		{bridge.PollDraft{Question: "q", Options: []string{"a", strings.Repeat("ö", 101)}}, "invalid_poll_option"},
		{bridge.PollDraft{Question: "q", Options: []string{"a", "b", "a"}}, "duplicate_poll_option"},
		{bridge.PollDraft{Question: "q", Options: two, Selectable: n(0)}, "invalid_poll_selectable"},
		{bridge.PollDraft{Question: "q", Options: two, Selectable: n(3)}, "invalid_poll_selectable"},
	}
	for _, c := range cases {
		p, err := bridge.ValidatePoll(c.d)
		if got := bridge.ErrorOf(err).Code; err != nil && got != c.code || err == nil && c.code != "" {
			t.Errorf("%+v: %v, want %q", c.d, err, c.code)
		}
		if err == nil && (p.Selectable < 1 || p.Question != c.d.Question) {
			t.Errorf("%+v: %+v", c.d, p)
		}
	}
}

// Each voter counts once per option chosen, in the poll's order; a name
// the poll lacks counts for nothing.
func TestPollTally(t *testing.T) {
	ana, _ := bridge.ParseRecipient("4915100000002")
	ben, _ := bridge.ParseRecipient("4915100000003")
	p := bridge.Poll{Question: "q", Options: []string{"a", "b", "c"}, Selectable: 2}
	got := p.Tally([]bridge.PollVote{{Voter: ana, Options: []string{"a", "c"}}, {Voter: ben, Options: []string{"c", "z"}}})
	if len(got) != 3 || len(got[0].Voters) != 1 || len(got[1].Voters) != 0 || got[1].Voters == nil ||
		len(got[2].Voters) != 2 || got[2].Voters[0] != ana || got[2].Voters[1] != ben {
		t.Errorf("tally %+v", got)
	}
}

// A vote that chose more options than the poll's selectable_count is no
// vote the poll allows (a modified client sends one): it counts for
// nothing, and the link drops it.
func TestPollVoteBeyondSelectableCountsForNothing(t *testing.T) {
	ana, _ := bridge.ParseRecipient("4915100000002")
	ben, _ := bridge.ParseRecipient("4915100000003")
	p := bridge.Poll{Question: "q", Options: []string{"a", "b", "c"}, Selectable: 1}
	got := p.Tally([]bridge.PollVote{{Voter: ana, Options: []string{"a", "b", "c"}}, {Voter: ben, Options: []string{"b"}}})
	if len(got[0].Voters) != 0 || len(got[2].Voters) != 0 || len(got[1].Voters) != 1 || got[1].Voters[0] != ben {
		t.Errorf("tally %+v: the vote of three options on a poll of one was counted", got)
	}
	if p.Admits([]string{"a", "b"}) || !p.Admits([]string{"a"}) || !p.Admits([]string{}) {
		t.Error("Admits: two options of a one-option poll admitted, or one or none (a vote taken back) refused")
	}
}

// FuzzValidatePoll: whatever a client sends as a poll is refused with one
// of the poll's codes or accepted within WhatsApp's bounds.
func FuzzValidatePoll(f *testing.F) {
	f.Add("Coming?", "Yes\nNo", 1)
	f.Add("", "a", 0)
	f.Add("q", "a\na", 2)
	f.Add("q", "a\n\xff", 1)
	f.Add("q", "a\nb\nc", 3)
	f.Fuzz(func(t *testing.T, question, options string, selectable int) {
		d := bridge.PollDraft{Question: question, Options: strings.Split(options, "\n"), Selectable: &selectable}
		p, err := bridge.ValidatePoll(d)
		if err != nil {
			if code := bridge.ErrorOf(err).Code; !strings.Contains(code, "poll") {
				t.Fatalf("code %q", code)
			}
			return
		}
		if len(p.Options) < 2 || len(p.Options) > 12 || p.Selectable < 1 || p.Selectable > len(p.Options) ||
			utf8.RuneCountInString(p.Question) > 255 || !utf8.ValidString(p.Question) {
			t.Fatalf("accepted %+v", p)
		}
		seen := map[string]bool{}
		for _, o := range p.Options {
			if seen[o] || o == "" || utf8.RuneCountInString(o) > 100 {
				t.Fatalf("accepted option %q of %+v", o, p)
			}
			seen[o] = true
		}
	})
}
