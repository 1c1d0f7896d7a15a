package sendqueue

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// messageColumns are the columns scanMessage reads, in its order.
const messageColumns = `id, whatsapp_id, request_id, position, recipient, type, status, retry_count, attempts,
	last_error, created_at, updated_at, body, file_path, file_name, mimetype`

type rowScanner interface{ Scan(dest ...any) error }

func scanMessage(r rowScanner) (Message, error) {
	var (
		m                Message
		status           string
		created, updated int64
	)
	err := r.Scan(&m.ID, &m.WhatsAppID, &m.RequestID, &m.Position, &m.Recipient, &m.Type, &status, &m.RetryCount,
		&m.Attempts, &m.LastError, &created, &updated, &m.body, &m.filePath, &m.fileName, &m.mimeType)
	m.Status = Status(status)
	m.CreatedAt, m.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return m, err
}

// Get returns one message of the log.
func (q *Queue) Get(ctx context.Context, id string) (Message, error) {
	m, err := scanMessage(q.opts.DB.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Message{}, ErrNotFound
	}
	return m, err
}

func (q *Queue) requestMessages(ctx context.Context, requestID string) ([]Message, error) {
	return q.query(ctx, `SELECT `+messageColumns+` FROM messages WHERE request_id = ? ORDER BY position`, requestID)
}

func (q *Queue) query(ctx context.Context, query string, args ...any) ([]Message, error) {
	rows, err := q.opts.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Filter selects messages of the log, newest first.
type Filter struct {
	Status Status    // empty: any
	Since  time.Time // zero: any; else created at or after
	Limit  int
	Cursor string // from a previous page; empty: the first page
}

// ErrBadCursor: the cursor was not produced by List.
var ErrBadCursor = errors.New("cursor is not one this API returned")

// List returns one page of the log, newest first, and the cursor of the next
// page (empty at the end). The cursor is the position (created_at, id) of
// the page's last message, so pages stay stable while messages arrive.
func (q *Queue) List(ctx context.Context, f Filter) ([]Message, string, error) {
	where, args := []string{"1 = 1"}, []any{}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(f.Status))
	}
	if !f.Since.IsZero() {
		where, args = append(where, "created_at >= ?"), append(args, f.Since.UnixMilli())
	}
	if f.Cursor != "" {
		created, id, err := decodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		where, args = append(where, "(created_at < ? OR (created_at = ? AND id < ?))"), append(args, created, created, id)
	}
	args = append(args, f.Limit+1) // one more tells whether a next page exists
	msgs, err := q.query(ctx, `SELECT `+messageColumns+` FROM messages WHERE `+strings.Join(where, " AND ")+
		` ORDER BY created_at DESC, id DESC LIMIT ?`, args...)
	if err != nil || len(msgs) <= f.Limit {
		return msgs, "", err
	}
	msgs = msgs[:f.Limit]
	last := msgs[len(msgs)-1]
	return msgs, encodeCursor(last.CreatedAt.UnixMilli(), last.ID), nil
}

func encodeCursor(created int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(created, 10) + ":" + id))
}

func decodeCursor(c string) (int64, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", ErrBadCursor
	}
	ms, id, ok := strings.Cut(string(raw), ":")
	created, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || id == "" {
		return 0, "", ErrBadCursor
	}
	return created, id, nil
}

// AdvanceStatus applies a receipt: the messages with these WhatsApp IDs move
// to status if that is forward (a late Delivered after Read is dropped). It
// returns the messages that changed.
func (q *Queue) AdvanceStatus(ctx context.Context, whatsappIDs []string, status Status) ([]Message, error) {
	var changed []Message
	now := q.opts.Now()
	err := q.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		changed = changed[:0]
		for _, wid := range whatsappIDs {
			m, err := scanMessage(tx.QueryRow(`SELECT `+messageColumns+` FROM messages WHERE whatsapp_id = ?`, wid))
			if errors.Is(err, sql.ErrNoRows) {
				continue // not one of ours (sent from the phone)
			}
			if err != nil {
				return err
			}
			if !advances(m.Status, status) {
				continue
			}
			if _, err := tx.Exec(`UPDATE messages SET status = ?, next_attempt_at = NULL, updated_at = ? WHERE id = ?`,
				string(status), now.UnixMilli(), m.ID); err != nil {
				return err
			}
			if m.Status == StatusQueued { // a receipt before the attempt's ack: it was sent
				if err := countDelivery(ctx, q.stmts, tx, now.UTC().Format(time.DateOnly), true); err != nil {
					return err
				}
			}
			m.Status, m.UpdatedAt = status, now
			if err := q.statusChangedTx(ctx, tx, m); err != nil {
				return err
			}
			changed = append(changed, m)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("apply receipt: %w", err)
	}
	if q.opts.OnStatus != nil {
		for _, m := range changed {
			q.opts.OnStatus(m)
		}
	}
	return changed, nil
}
