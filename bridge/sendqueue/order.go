package sendqueue

import (
	"context"
	"database/sql"
	"errors"
)

// Order within a chat (DESIGN section 11): the messages to one chat are
// attempted in the order they were accepted, also across retries and
// restarts. A message waits while an earlier one to the same chat is still
// Queued (retrying, or held by a restriction); only a chat's head is due.
// Accepted order is (created_at, id): ids are UUIDv7, increasing within a
// millisecond in the order the bridge made them, so the items of one
// request and requests in the same millisecond keep theirs.

// waitsForEarlier is the SQL condition "an earlier message to m's chat is
// still Queued"; the outer query names its row m. The messages_chat index
// (recipient, created_at, position) WHERE status = 'Queued' answers it.
const waitsForEarlier = `EXISTS (SELECT 1 FROM messages e WHERE e.recipient = m.recipient AND e.status = 'Queued'
	AND (e.created_at < m.created_at OR (e.created_at = m.created_at AND e.id < m.id)))`

// selectDueHeads reads the messages due now that head their chat, oldest
// due first.
const selectDueHeads = `SELECT ` + messageColumns + ` FROM messages m WHERE m.next_attempt_at <= ? AND NOT ` +
	waitsForEarlier + ` ORDER BY m.next_attempt_at, m.created_at, m.position LIMIT ?`

// selectNextHeadDue is when the next chat head is due; NULL when none is.
const selectNextHeadDue = `SELECT min(m.next_attempt_at) FROM messages m WHERE m.next_attempt_at IS NOT NULL AND NOT ` +
	waitsForEarlier

// behindInChat reports whether an earlier message to id's chat is still
// Queued, so that id must wait for it.
func (q *Queue) behindInChat(ctx context.Context, id string) (bool, error) {
	var one int
	err := q.db.QueryRowContext(ctx, `SELECT 1 FROM messages m WHERE m.id = ? AND `+waitsForEarlier, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}
