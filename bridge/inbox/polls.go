package inbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/msgbridge/msgbridge/bridge"
)

// A voter's later vote replaces the earlier one; one sent before the
// vote stored (delivered late) does not.
const upsertVote = `INSERT INTO poll_votes (poll_id, voter, options, voted_at) VALUES (?, ?, ?, ?)
	ON CONFLICT (poll_id, voter) DO UPDATE SET options = excluded.options, voted_at = excluded.voted_at
	WHERE excluded.voted_at >= poll_votes.voted_at`

// storeVote records in, a vote, as its voter's current choice on the poll.
func (b *Inbox) storeVote(ctx context.Context, tx *sql.Tx, in bridge.Incoming) error {
	options, err := json.Marshal(append([]string{}, in.Votes...))
	if err != nil {
		return fmt.Errorf("inbox: %w", err)
	}
	if _, err := b.stmts.Exec(ctx, tx, upsertVote, in.TargetID, in.From.String(), string(options),
		in.Timestamp.UnixMilli()); err != nil {
		return fmt.Errorf("inbox: store the vote %s: %w", in.WhatsAppID, err)
	}
	return nil
}

// Votes are the current votes on a poll the account sent, one per voter,
// oldest first.
func (b *Inbox) Votes(ctx context.Context, pollID string) ([]bridge.PollVote, error) {
	rows, err := b.opts.DB.QueryContext(ctx, `SELECT voter, options FROM poll_votes WHERE poll_id = ?
		ORDER BY voted_at, voter`, pollID)
	if err != nil {
		return nil, fmt.Errorf("inbox: votes on %s: %w", pollID, err)
	}
	defer func() { _ = rows.Close() }()
	var votes []bridge.PollVote
	for rows.Next() {
		var voter, options string
		var v bridge.PollVote
		if err := rows.Scan(&voter, &options); err != nil {
			return nil, fmt.Errorf("inbox: votes on %s: %w", pollID, err)
		}
		if v.Voter, err = bridge.ParseRecipient(voter); err != nil {
			return nil, fmt.Errorf("inbox: stored voter %q: %w", voter, err)
		}
		if err := json.Unmarshal([]byte(options), &v.Options); err != nil {
			return nil, fmt.Errorf("inbox: stored vote of %s: %w", voter, err)
		}
		votes = append(votes, v)
	}
	return votes, rows.Err()
}
