package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// Answers keeps the answers of requests that are not messages (group
// actions, which WhatsApp carries out at once and the queue never holds)
// under their Idempotency-Key. They share the sends' key table and window:
// one key names one request of whichever kind, and a key sent with another
// request is refused the same way (idempotency_key_reused).
type Answers struct {
	db      *sql.DB
	batcher *sqlite.Batcher
	now     func() time.Time
}

// Answer is a group action's answer as its door gave it, kept for the
// repeats of its key.
type Answer struct {
	Status int
	Body   []byte
}

// answerRequestID marks a key held by an answer instead of a send request.
const answerRequestID = "answer"

// NewAnswers keeps answers in db (bridge.db, written through batcher).
func NewAnswers(db *sql.DB, batcher *sqlite.Batcher, now func() time.Time) *Answers {
	return &Answers{db: db, batcher: batcher, now: now}
}

// Claim takes key for the request whose hash is reqHash: nil when the
// caller is to carry the request out (then Keep or Release the key), the
// first answer when the request was made already, and an error when the
// key belongs to another request. A key claimed but never answered (the
// process ended during its action) is carried out again: the caller runs
// one request per key at a time, and WhatsApp answers a repeated group
// action as done or already done (already_member), never twice.
func (a *Answers) Claim(ctx context.Context, key, reqHash string) (*Answer, error) {
	var stored *Answer
	now := a.now()
	err := a.batcher.Do(ctx, func(tx *sql.Tx) error {
		stored = nil
		var (
			hash    string
			status  int
			body    []byte
			created int64
		)
		err := tx.QueryRowContext(ctx, `SELECT request_hash, status, response, created_at FROM idempotency_keys WHERE key = ?`, key).
			Scan(&hash, &status, &body, &created)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case now.Sub(time.UnixMilli(created)) < IdempotencyWindow:
			if hash != reqHash {
				return errKeyReused()
			}
			if status != 0 {
				stored = &Answer{Status: status, Body: body}
				return nil
			}
		}
		_, err = tx.ExecContext(ctx, upsertIdempotencyKey, key, answerRequestID, reqHash, now.UnixMilli())
		return err
	})
	return stored, err
}

// Keep stores the answer of the request that claimed key.
func (a *Answers) Keep(ctx context.Context, key string, res Answer) error {
	return a.batcher.Do(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE idempotency_keys SET status = ?, response = ? WHERE key = ? AND request_id = ?`,
			res.Status, res.Body, key, answerRequestID)
		return err
	})
}

// Release frees key after a request that did nothing (the session was
// down): a repeat carries it out.
func (a *Answers) Release(ctx context.Context, key string) error {
	return a.batcher.Do(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE key = ? AND request_id = ? AND status = 0`, key, answerRequestID)
		return err
	})
}
