package sendqueue

import (
	"context"
	"database/sql"
	"strconv"
	"time"
)

// Order within a chat: the messages to one chat are
// attempted in the order they were accepted, also across retries and
// restarts. A message waits while an earlier one to the same chat is still
// Queued (retrying, or held by a restriction); only a chat's head is due.
// Accepted order is the order of the rows' inserts (SQLite's rowid, which
// only grows while rows wait: a new row gets the largest plus one), because
// a message is accepted when its transaction commits and the writer commits
// one at a time. Ids (UUIDv7) are made before that, so two concurrent
// requests may commit in the other order than their ids.

// waitsForEarlier is the SQL condition "an earlier message to m's chat is
// still Queued"; the outer query names its row m. The messages_chat index
// (recipient, …) WHERE status = 'Queued', which holds each row's rowid,
// answers it.
const waitsForEarlier = `EXISTS (SELECT 1 FROM messages e WHERE e.recipient = m.recipient AND e.status = 'Queued'
	AND e.rowid < m.rowid)`

// selectDueHeads reads the messages due now that head their chat, oldest
// due first, dueBatch at most (written in, not bound: see selectAhead).
var selectDueHeads = `SELECT ` + messageColumns + ` FROM messages m WHERE m.next_attempt_at <= ? AND NOT ` +
	waitsForEarlier + ` ORDER BY m.next_attempt_at, m.created_at, m.position LIMIT ` + strconv.Itoa(dueBatch)

// selectHeadsItsChat reports whether the message ?1 heads its chat (no
// earlier message to the same chat is Queued).
const selectHeadsItsChat = `SELECT NOT ` + waitsForEarlier + ` FROM messages m WHERE m.id = ?`

// headsItsChat reports, in the transaction that stored it, whether the
// message id heads its chat. One that does not cannot be attempted before
// the earlier message ends, whose end wakes the worker anyway: waking it
// for each of a burst accepted while unlinked to one chat made it walk the
// whole backlog of that chat once per request (issue 47), since every
// message but the head is skipped by selectNextHeadDue.
func (q *Queue) headsItsChat(ctx context.Context, tx *sql.Tx, id string) (bool, error) {
	var heads bool
	err := q.stmts.QueryRow(ctx, tx, selectHeadsItsChat, id).Scan(&heads)
	return heads, err
}

// selectNextHeadDue is when the next chat head is due; no row when none
// is. It walks the due index in order and stops at the first head, which is
// usually the first row.
const selectNextHeadDue = `SELECT m.next_attempt_at FROM messages m WHERE m.next_attempt_at IS NOT NULL AND NOT ` +
	waitsForEarlier + ` ORDER BY m.next_attempt_at LIMIT 1`

// inFlightWait bounds how long a request's immediate attempt waits for an
// earlier message of its chat that is being attempted right now (another
// request's); past it, the worker sends it after that one.
const inFlightWait = 5 * time.Second

// maxEarlierAwaited bounds the earlier messages of its chat that a
// request's immediate attempt waits for. Behind more, the worker sends it
// in its turn: a chat's messages go one at a time, so that many could not
// all be sent within inFlightWait anyway, and reading a chat's whole
// backlog at every request and again at every release made each request
// cost more as the backlog grew (8.5 ms per read behind 10,000).
const maxEarlierAwaited = 64

// selectEarlierInChat lists the earlier Queued messages of id's chat, up to
// ? of them, and whether each waits for a retry or a restriction's end (due
// later than ?); the others are being attempted, or about to be.
const selectEarlierInChat = `SELECT e.id, e.next_attempt_at > ? FROM messages m JOIN messages e ON e.recipient = m.recipient AND e.status = 'Queued'
	AND e.rowid < m.rowid WHERE m.id = ? LIMIT ?`

// clearOfEarlier reports whether id may be attempted now as far as its
// chat's order goes: no earlier message is Queued, or every one that is
// was being attempted (or, unpaced, due now, so that the worker attempts
// it at once) and finished within inFlightWait. It never waits for pacing
// or a retry: then the worker sends id after the earlier ones.
func (q *Queue) clearOfEarlier(ctx context.Context, id string) bool {
	deadline := time.Now().Add(inFlightWait)
	for {
		seen := q.releaseCount()
		earlier, err := q.earlierInChat(ctx, id, maxEarlierAwaited+1)
		if err != nil {
			return false // an unreadable order is the worker's to sort out
		}
		if len(earlier) == 0 {
			return true
		}
		if len(earlier) > maxEarlierAwaited {
			return false
		}
		// Paced, an earlier message that is not being sent takes the next
		// slot: waiting for it would be waiting for the pace.
		released, allGoing := q.whenReleased(earlier, q.pace.interval > 0, seen)
		if !allGoing {
			return false
		}
		timer := time.NewTimer(time.Until(deadline))
		select {
		case <-released:
			timer.Stop()
		case <-timer.C:
			return false
		case <-ctx.Done():
			timer.Stop()
			return false
		}
	}
}

// earlier is an earlier Queued message of a chat.
type earlier struct {
	id       string
	dueLater bool // waits for a retry or a restriction's end
}

// earlierInChat reads up to limit earlier Queued messages of id's chat.
func (q *Queue) earlierInChat(ctx context.Context, id string, limit int) ([]earlier, error) {
	rows, err := q.stmts.Read(ctx, selectEarlierInChat, q.now().UnixMilli(), id, limit)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []earlier
	for rows.Next() {
		var e earlier
		if err := rows.Scan(&e.id, &e.dueLater); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// releaseCount is the number of announcements so far; read it before the
// order is read from the database.
func (q *Queue) releaseCount() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.releases
}

// closedChannel is ready at once: the order must be read again.
var closedChannel = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// whenReleased returns a channel closed when an attempt or a claim next
// ends, and whether every one of msgs is going: being sent now, or,
// unpaced, claimed by a request or due now for the worker. Paced, a message
// merely claimed by a request that itself waits is not going: waiting for
// it chained every request to one chat behind the one before. When an
// attempt ended since seen (the count read before msgs were), msgs may be
// finished already and no later release may come: the channel is ready at
// once so that the caller reads the order again.
func (q *Queue) whenReleased(msgs []earlier, paced bool, seen uint64) (<-chan struct{}, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.releases != seen {
		return closedChannel, true
	}
	for _, e := range msgs {
		going := q.sending[e.id] || (!paced && (q.claims.Held(e.id) || !e.dueLater))
		if !going {
			return nil, false
		}
	}
	if q.released == nil {
		q.released = make(chan struct{})
	}
	return q.released, true
}
