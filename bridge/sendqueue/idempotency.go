package sendqueue

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// IdempotencyWindow is how long a repeated Idempotency-Key returns the first
// response instead of sending again.
const IdempotencyWindow = 24 * time.Hour

type idempotencyRecord struct {
	requestID string
	stored    *Outcome // nil until the first request recorded it
}

// errKeyReused: the key came with another request than its first one. The
// first response would describe messages this request did not ask for, and
// sending would break the key's promise: neither is right, so say so.
func errKeyReused() error {
	return bridge.Errorf(bridge.KindConflict, bridge.CodeIdempotencyKeyReused,
		"this Idempotency-Key was used in the last %s for a different request", IdempotencyWindow)
}

const (
	selectIdempotencyKey = `SELECT request_id, request_hash, status, response, created_at FROM idempotency_keys WHERE key = ?`
	upsertIdempotencyKey = `INSERT INTO idempotency_keys (key, request_id, request_hash, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET request_id = excluded.request_id, request_hash = excluded.request_hash,
		status = 0, response = '', created_at = excluded.created_at`
)

// claimIdempotencyKey records key for requestID and the request's hash, or
// returns the earlier request that holds it; an earlier request with another
// hash is a conflict. A key older than the window is taken over.
func (q *Queue) claimIdempotencyKey(ctx context.Context, tx *sql.Tx, key, reqHash, requestID string, now time.Time) (*idempotencyRecord, error) {
	var (
		prior     idempotencyRecord
		priorHash string
		status    int
		body      []byte
		created   int64
	)
	err := q.stmts.QueryRow(ctx, tx, selectIdempotencyKey, key).Scan(&prior.requestID, &priorHash, &status, &body, &created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, err
	case now.Sub(time.UnixMilli(created)) < IdempotencyWindow:
		// A key stored before hashes were (empty) cannot be compared; it
		// replays as it always did, for the rest of its window.
		if priorHash != "" && priorHash != reqHash {
			return nil, errKeyReused()
		}
		if status != 0 {
			// One that cannot be read replays from the request's messages.
			if o, err := decodeOutcome(body); err == nil {
				prior.stored = &o
			}
		}
		return &prior, nil
	}
	_, err = q.stmts.Exec(ctx, tx, upsertIdempotencyKey, key, requestID, reqHash, now.UnixMilli())
	return nil, err
}

// requestHash identifies what req asks for: its recipient and, in order,
// each item's type, text, file name and content (by SHA-256), then, for an
// item that has them, its extras (reply, mentions, voice note, location,
// contact). Every field is length-prefixed, so no two different requests
// hash alike by moving a boundary; an item without extras hashes as before
// they existed, so a key stored then still matches its request.
func requestHash(req Request) (string, error) {
	h := sha256.New()
	field(h, req.Recipient.JID())
	for i, it := range req.Items {
		field(h, string(it.Type))
		field(h, it.Text)
		if a := it.Action; a != nil {
			field(h, a.TargetID)
			field(h, a.TargetSender.JID())
			field(h, a.Emoji)
		}
		if it.File == nil {
			field(h, "")
			field(h, "")
		} else {
			sum, err := it.File.Hash()
			if err != nil {
				return "", bridge.Internal(bridge.CodeStoreFailed, "the request could not be stored; nothing will be sent",
					fmt.Errorf("hash file of item %d: %w", i, err))
			}
			field(h, it.File.Name)
			field(h, sum)
		}
		if extras := detailsOf(it).encode(); extras != "{}" || it.ReplyTo != "" {
			// Never a type's name, so no item's extras read as the next item.
			field(h, "\x00extras")
			field(h, it.ReplyTo)
			field(h, extras)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func field(h hash.Hash, s string) {
	_ = binary.Write(h, binary.BigEndian, uint64(len(s))) // a hash.Hash never fails to write
	_, _ = io.WriteString(h, s)
}

// StoreOutcome records the outcome of the request that claimed key.
func (q *Queue) StoreOutcome(ctx context.Context, key string, o Outcome) error {
	body := encodeOutcome(o)
	return q.batcher.Do(ctx, func(tx *sql.Tx) error {
		_, err := q.stmts.Exec(ctx, tx, `UPDATE idempotency_keys SET status = ?, response = ? WHERE key = ?`, outcomeAnswered, body, key)
		return err
	})
}

func (q *Queue) replay(ctx context.Context, prior *idempotencyRecord) (Result, error) {
	if prior.stored != nil {
		return Result{Replay: true, Stored: prior.stored}, nil
	}
	msgs, err := q.requestMessages(ctx, prior.requestID)
	if err != nil {
		return Result{}, readFailed(err)
	}
	return Result{Replay: true, Messages: messages(msgs)}, nil
}

// pruneIdempotencyKeys forgets keys past the window.
func (q *Queue) pruneIdempotencyKeys(ctx context.Context) error {
	cutoff := q.now().Add(-IdempotencyWindow).UnixMilli()
	return q.batcher.Do(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < ?`, cutoff)
		return err
	})
}

// maxIdempotencyKey bounds an idempotency key's length.
const maxIdempotencyKey = 255

var errIdempotencyKey = bridge.Invalid(bridge.CodeInvalidIdempotencyKey, "Idempotency-Key must be 1-255 printable ASCII characters")

// ParseIdempotencyKey checks a key a client sent (empty: none): at most 255
// printable ASCII characters. Doors check it before they read a body, so
// that a bad key costs no upload.
func ParseIdempotencyKey(key string) (string, error) {
	if len(key) > maxIdempotencyKey || strings.IndexFunc(key, func(r rune) bool { return r < '!' || r > '~' }) >= 0 {
		return "", errIdempotencyKey
	}
	return key, nil
}
