package messaging

import (
	"context"

	"github.com/msgbridge/msgbridge/bridge"
)

// Polls reads the polls the bridge sent (*sendqueue.Log) and the votes
// on them (*inbox.Inbox).
type Polls interface {
	Poll(ctx context.Context, whatsappID string) (bridge.Poll, bool, error)
	Votes(ctx context.Context, pollID string) ([]bridge.PollVote, error)
}

type pollJSON struct {
	Question        string           `json:"question"`
	SelectableCount int              `json:"selectable_count"`
	Options         []pollOptionJSON `json:"options"`
}

type pollOptionJSON struct {
	Name   string   `json:"name"`
	Count  int      `json:"count"`
	Voters []string `json:"voters"`
}

// pollOf is m's question and current tally; nil when m is no poll.
func (s *server) pollOf(ctx context.Context, m bridge.Message) (*pollJSON, error) {
	if m.Type != bridge.TypePoll || s.Polls == nil {
		return nil, nil //nolint:nilnil // no poll is no error
	}
	poll, known, err := s.Polls.Poll(ctx, m.WhatsAppID)
	if err != nil || !known {
		return nil, err
	}
	votes, err := s.Polls.Votes(ctx, m.WhatsAppID)
	if err != nil {
		return nil, bridge.Internal(bridge.CodeReadFailed, "the poll's votes could not be read", err)
	}
	out := &pollJSON{Question: poll.Question, SelectableCount: poll.Selectable}
	for _, t := range poll.Tally(votes) {
		o := pollOptionJSON{Name: t.Option, Count: len(t.Voters), Voters: make([]string, len(t.Voters))}
		for i, v := range t.Voters {
			o.Voters[i] = v.String()
		}
		out.Options = append(out.Options, o)
	}
	return out, nil
}
