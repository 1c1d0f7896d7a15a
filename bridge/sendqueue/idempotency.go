package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// IdempotencyWindow is how long a repeated Idempotency-Key returns the first
// response instead of sending again.
const IdempotencyWindow = 24 * time.Hour

// StoredResponse is the HTTP response given to the first request of an
// idempotency key.
type StoredResponse struct {
	Status int
	Body   []byte
}

type idempotencyRecord struct {
	requestID string
	stored    *StoredResponse // nil until the first request recorded it
}

// claimIdempotencyKey records key for requestID, or returns the earlier
// request that holds it. A key older than the window is taken over.
func claimIdempotencyKey(tx *sql.Tx, key, requestID string, now time.Time) (*idempotencyRecord, error) {
	var (
		prior   idempotencyRecord
		status  int
		body    []byte
		created int64
	)
	err := tx.QueryRow(`SELECT request_id, status, response, created_at FROM idempotency_keys WHERE key = ?`, key).
		Scan(&prior.requestID, &status, &body, &created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, err
	case now.Sub(time.UnixMilli(created)) < IdempotencyWindow:
		if status != 0 {
			prior.stored = &StoredResponse{Status: status, Body: body}
		}
		return &prior, nil
	}
	_, err = tx.Exec(`INSERT INTO idempotency_keys (key, request_id, created_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET request_id = excluded.request_id, status = 0, response = '', created_at = excluded.created_at`,
		key, requestID, now.UnixMilli())
	return nil, err
}

// StoreResponse records the response of the request that claimed key.
func (q *Queue) StoreResponse(ctx context.Context, key string, resp StoredResponse) error {
	return q.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE idempotency_keys SET status = ?, response = ? WHERE key = ?`, resp.Status, resp.Body, key)
		return err
	})
}

func (q *Queue) replay(ctx context.Context, prior *idempotencyRecord) (Result, error) {
	if prior.stored != nil {
		return Result{Replay: true, Stored: prior.stored}, nil
	}
	msgs, err := q.requestMessages(ctx, prior.requestID)
	if err != nil {
		return Result{}, err
	}
	return Result{Replay: true, Messages: msgs}, nil
}

// pruneIdempotencyKeys forgets keys past the window.
func (q *Queue) pruneIdempotencyKeys(ctx context.Context) error {
	cutoff := q.opts.Now().Add(-IdempotencyWindow).UnixMilli()
	return q.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`DELETE FROM idempotency_keys WHERE created_at < ?`, cutoff)
		return err
	})
}
