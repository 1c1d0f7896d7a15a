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

	"github.com/msgbridge/msgbridge/bridge"
)

// messageColumns are the columns scanRow reads, in its order.
const messageColumns = `id, whatsapp_id, request_id, position, recipient, type, status, retry_count, attempts,
	last_error, created_at, updated_at, body, file_path, file_name, mimetype`

type rowScanner interface{ Scan(dest ...any) error }

func scanRow(r rowScanner) (row, error) {
	var (
		m                row
		jid, typ, status string
		created, updated int64
	)
	err := r.Scan(&m.ID, &m.WhatsAppID, &m.requestID, &m.position, &jid, &typ, &status, &m.RetryCount,
		&m.Attempts, &m.LastError, &created, &updated, &m.body, &m.filePath, &m.fileName, &m.mimeType)
	if err != nil {
		return m, err
	}
	// The store holds the JID, WhatsApp's address, which names the recipient
	// whatever its kind.
	if m.Recipient, err = bridge.RecipientFromJID(jid); err != nil {
		return m, fmt.Errorf("message %s: stored recipient %q: %w", m.ID, jid, err)
	}
	m.Type, m.Status = bridge.MessageType(typ), bridge.Status(status)
	m.CreatedAt, m.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return m, nil
}

// errNotFound: no message with the id asked for.
func errNotFound() error {
	return bridge.Errorf(bridge.KindNotFound, "not_found", "no message with this id")
}

// readFailed hides a storage error from clients.
func readFailed(err error) error {
	return bridge.Internal("read_failed", "the message log could not be read", err)
}

// Get returns one message of the log; a bridge.Error of KindNotFound
// (not_found) when there is none with id.
func (q *Queue) Get(ctx context.Context, id string) (bridge.Message, error) {
	m, err := scanRow(q.opts.DB.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE id = ?`, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return bridge.Message{}, errNotFound()
	case err != nil:
		return bridge.Message{}, readFailed(err)
	}
	return m.Message, nil
}

func (q *Queue) requestMessages(ctx context.Context, requestID string) ([]row, error) {
	return q.query(ctx, `SELECT `+messageColumns+` FROM messages WHERE request_id = ? ORDER BY position`, requestID)
}

func (q *Queue) query(ctx context.Context, query string, args ...any) ([]row, error) {
	rows, err := q.opts.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []row
	for rows.Next() {
		m, err := scanRow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Filter selects messages of the log, newest first.
type Filter struct {
	Status bridge.Status // empty: any
	Since  time.Time     // zero: any; else created at or after
	Limit  int           // at least 1
	Cursor string        // from a previous page; empty: the first page
}

// List returns one page of the log, newest first, and the cursor of the next
// page (empty at the end). The cursor is the position (created_at, id) of
// the page's last message, so pages stay stable while messages arrive. A
// cursor List did not return is a bridge.Error of KindInvalid
// (invalid_cursor), never the first page.
func (q *Queue) List(ctx context.Context, f Filter) ([]bridge.Message, string, error) {
	if f.Limit < 1 {
		return nil, "", bridge.Invalid("invalid_limit", "limit must be at least 1")
	}
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
	if err != nil {
		return nil, "", readFailed(err)
	}
	if len(msgs) <= f.Limit {
		return messages(msgs), "", nil
	}
	msgs = msgs[:f.Limit]
	last := msgs[len(msgs)-1]
	return messages(msgs), encodeCursor(last.CreatedAt.UnixMilli(), last.ID), nil
}

func encodeCursor(created int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(created, 10) + ":" + id))
}

// errBadCursor: the cursor was not produced by List.
func errBadCursor() error {
	return bridge.Invalid("invalid_cursor", "cursor is not one this API returned")
}

// decodeCursor accepts exactly the cursors encodeCursor makes. Decoding
// alone is lenient (base64 skips line breaks and ignores stray padding
// bits; ParseInt takes a sign and leading zeros), so a cursor must encode
// back to itself.
func decodeCursor(c string) (int64, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", errBadCursor()
	}
	ms, id, ok := strings.Cut(string(raw), ":")
	created, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || created < 0 || id == "" || encodeCursor(created, id) != c {
		return 0, "", errBadCursor()
	}
	return created, id, nil
}

// Receipt applies WhatsApp's receipt (see AdvanceStatus).
func (q *Queue) Receipt(ctx context.Context, r bridge.Receipt) error {
	_, err := q.AdvanceStatus(ctx, r.WhatsAppIDs, r.Status)
	return err
}

// AdvanceStatus applies a receipt: the messages with these WhatsApp IDs move
// to status if that is forward (a late Delivered after Read is dropped, and
// a receipt never fails a message). It returns the messages that changed.
func (q *Queue) AdvanceStatus(ctx context.Context, whatsappIDs []string, status bridge.Status) ([]bridge.Message, error) {
	var changed []bridge.Message
	now := q.opts.Now()
	err := q.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		changed = changed[:0]
		for _, wid := range whatsappIDs {
			m, moved, err := q.advance(ctx, tx, wid, status, now)
			if err != nil {
				return err
			}
			if moved {
				changed = append(changed, m)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("apply receipt: %w", err)
	}
	for range changed {
		q.opts.Observer.MessageStatus(status)
	}
	return changed, nil
}

const (
	selectByWhatsAppID = `SELECT ` + messageColumns + ` FROM messages WHERE whatsapp_id = ?`
	advanceStatus      = `UPDATE messages SET status = ?, next_attempt_at = NULL, updated_at = ? WHERE id = ?`
)

// advance moves the message with WhatsApp ID wid to status in tx, if that
// is forward, and reports whether it moved.
func (q *Queue) advance(ctx context.Context, tx *sql.Tx, wid string, status bridge.Status, now time.Time) (bridge.Message, bool, error) {
	m, err := scanRow(q.stmts.QueryRow(ctx, tx, selectByWhatsAppID, wid))
	if errors.Is(err, sql.ErrNoRows) {
		return bridge.Message{}, false, nil // not one of ours (sent from the phone)
	}
	if err != nil || !receiptMoves(m.Status, status) {
		return bridge.Message{}, false, err
	}
	if _, err := q.stmts.Exec(ctx, tx, advanceStatus, string(status), now.UnixMilli(), m.ID); err != nil {
		return bridge.Message{}, false, err
	}
	if m.Status == bridge.StatusQueued { // a receipt before the attempt's ack: it was sent
		if err := countDelivery(ctx, q.stmts, tx, now.UTC().Format(time.DateOnly), true); err != nil {
			return bridge.Message{}, false, err
		}
	}
	m.Status, m.UpdatedAt = status, now
	return m.Message, true, q.opts.Events.StatusChanged(ctx, tx, m.Message)
}
