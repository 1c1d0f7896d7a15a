package whatsapp

import (
	"bytes"
	"context"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
)

// PollSource finds a poll the account sent (the message log), by its
// WhatsApp id: a vote names the options it chose by their SHA-256, so the
// names are what reads it. false when the log has no such poll.
type PollSource interface {
	Poll(ctx context.Context, whatsappID string) (bridge.Poll, bool, error)
}

// readVote decrypts a vote on one of the account's polls and names the
// options it chose. false (acked and dropped) for a vote on a poll the
// bridge did not send, or one that does not decrypt; an error when the
// log could not be read, so that WhatsApp delivers the vote again.
func (m *Session) readVote(cli *whatsmeow.Client, e *events.Message, in *bridge.Incoming) (bool, error) {
	if m.opts.Polls == nil {
		return false, nil
	}
	poll, known, err := m.opts.Polls.Poll(m.bgCtx, in.TargetID)
	if err != nil || !known {
		return false, err
	}
	vote, err := cli.DecryptPollVote(m.bgCtx, e)
	if err != nil {
		m.log.Info("a poll vote does not decrypt; dropped", "poll", in.TargetID, "error", err.Error())
		return false, nil
	}
	in.Votes = chosenOptions(poll.Options, vote.GetSelectedOptions())
	if !poll.Admits(in.Votes) {
		m.log.Info("a poll vote chose more options than the poll allows; dropped", "poll", in.TargetID,
			"chosen", len(in.Votes), "selectable", poll.Selectable)
		return false, nil
	}
	return true, nil
}

// chosenOptions are the names of options whose hash is among selected, in
// the poll's order; never nil (a vote taken back chose none).
func chosenOptions(options []string, selected [][]byte) []string {
	chosen := make([]string, 0, len(selected))
	for i, sum := range whatsmeow.HashPollOptions(options) {
		for _, s := range selected {
			if bytes.Equal(sum, s) {
				chosen = append(chosen, options[i])
				break
			}
		}
	}
	return chosen
}
