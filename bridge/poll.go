package bridge

import (
	"strings"
	"unicode/utf8"
)

// WhatsApp's bounds of a poll, as its apps enforce them.
const (
	MinPollOptions = 2
	MaxPollOptions = 12
	// MaxPollOptionRunes bounds one option's name.
	MaxPollOptionRunes = 100
	// MaxPollQuestionRunes bounds the question.
	MaxPollQuestionRunes = 255
)

// IncomingPollVote is the kind of Incoming that is a vote on a poll the
// account sent: TargetID is the poll, Votes the chosen options' names.
const IncomingPollVote = "poll_vote"

// Poll is a question with options, of which a voter may choose up to
// Selectable.
type Poll struct {
	Question   string
	Options    []string
	Selectable int
}

// PollDraft is a poll as a door read it; nil fields are missing.
type PollDraft struct {
	Question   string
	Options    []string
	Selectable *int // nil: one option
}

// ValidatePoll checks a poll, each fault with its own code: a question of
// 1-255 characters, 2-12 options, each 1-100 characters and unique (a vote
// names options by the SHA-256 of their names, so two alike could not be
// told apart), and a selectable count from 1 to the number of options.
func ValidatePoll(d PollDraft) (Poll, error) {
	if !pollText(d.Question, MaxPollQuestionRunes) {
		return Poll{}, Invalid(CodeInvalidPollQuestion, "the poll's question must be UTF-8 text of 1-%d characters", MaxPollQuestionRunes)
	}
	if len(d.Options) < MinPollOptions || len(d.Options) > MaxPollOptions {
		return Poll{}, Invalid(CodeInvalidPollOptions, "a poll has %d to %d options, not %d", MinPollOptions, MaxPollOptions, len(d.Options))
	}
	seen := make(map[string]bool, len(d.Options))
	for i, o := range d.Options {
		if !pollText(o, MaxPollOptionRunes) {
			return Poll{}, Invalid(CodeInvalidPollOption, "options[%d] must be UTF-8 text of 1-%d characters", i, MaxPollOptionRunes)
		}
		if seen[o] {
			return Poll{}, Invalid(CodeDuplicatePollOption, "options[%d] repeats %q", i, Truncate(o, 32))
		}
		seen[o] = true
	}
	p := Poll{Question: d.Question, Options: d.Options, Selectable: 1}
	if d.Selectable != nil {
		p.Selectable = *d.Selectable
	}
	if p.Selectable < 1 || p.Selectable > len(d.Options) {
		return Poll{}, Invalid(CodeInvalidPollSelectable, "selectable_count must be from 1 to %d, the number of options", len(d.Options))
	}
	return p, nil
}

// pollText reports a question or option name: valid UTF-8 without NUL,
// not blank, of at most limit characters.
func pollText(s string, limit int) bool {
	return utf8.ValidString(s) && strings.TrimSpace(s) != "" && !strings.ContainsRune(s, 0) &&
		utf8.RuneCountInString(s) <= limit
}

// PollVote is one voter's current choice on a poll.
type PollVote struct {
	Voter   Recipient
	Options []string
}

// OptionTally is how many chose one option of a poll, and who.
type OptionTally struct {
	Option string
	Voters []Recipient
}

// Admits reports whether a vote that chose options is one p allows: at
// most its selectable count (none is a vote taken back). WhatsApp's
// clients never send more; a modified one can, and it must not count.
func (p Poll) Admits(options []string) bool {
	return p.Selectable < 1 || len(options) <= p.Selectable
}

// Tally counts votes per option of p, in the poll's order; a vote for a
// name p does not have (none the link lets through), or for more options
// than p admits, is not counted.
func (p Poll) Tally(votes []PollVote) []OptionTally {
	out := make([]OptionTally, len(p.Options))
	index := make(map[string]int, len(p.Options))
	for i, o := range p.Options {
		out[i] = OptionTally{Option: o, Voters: []Recipient{}}
		index[o] = i
	}
	for _, v := range votes {
		if !p.Admits(v.Options) {
			continue
		}
		for _, o := range v.Options {
			if i, ok := index[o]; ok {
				out[i].Voters = append(out[i].Voters, v.Voter)
			}
		}
	}
	return out
}
