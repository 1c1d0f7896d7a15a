package sendqueue

import (
	"context"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Filter selects messages of the log, newest first.
type Filter struct {
	Status bridge.Status    // empty: any
	Chat   bridge.Recipient // zero: any; else sent to this chat
	Since  time.Time        // zero: any; else created at or after
	Limit  int              // at least 1
	Cursor string           // from a previous page; empty: the first page
}

// List returns one page of the log, newest first, and the cursor of the next
// page (empty at the end). The cursor is the position (created_at, id) of
// the page's last message, so pages stay stable while messages arrive. A
// cursor List did not return is a bridge.Error of KindInvalid
// (invalid_cursor), never the first page.
func (l *MessageLog) List(ctx context.Context, f Filter) ([]bridge.Message, string, error) {
	query, args, err := listQuery(f)
	if err != nil {
		return nil, "", err
	}
	msgs, err := l.query(ctx, query, args...)
	if err != nil {
		return nil, "", readFailed(err)
	}
	if len(msgs) <= f.Limit {
		return messages(msgs), "", nil
	}
	msgs = msgs[:f.Limit]
	last := msgs[len(msgs)-1]
	return messages(msgs), bridge.EncodeCursor(last.CreatedAt.UnixMilli(), last.ID), nil
}

// listQuery is the SELECT of one page of f, with its arguments: one row
// more than the page, which tells whether a next page exists.
func listQuery(f Filter) (string, []any, error) {
	if f.Limit < 1 {
		return "", nil, bridge.Invalid(bridge.CodeInvalidLimit, "limit must be at least 1")
	}
	where, args := []string{"1 = 1"}, []any{}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(f.Status))
	}
	if !f.Chat.IsZero() {
		where, args = append(where, "recipient = ?"), append(args, f.Chat.JID()) // the store holds the JID
	}
	if !f.Since.IsZero() {
		where, args = append(where, "created_at >= ?"), append(args, f.Since.UnixMilli())
	}
	if f.Cursor != "" {
		created, id, err := bridge.DecodeCursor(f.Cursor)
		if err != nil {
			return "", nil, err
		}
		where, args = append(where, "(created_at < ? OR (created_at = ? AND id < ?))"), append(args, created, created, id)
	}
	args = append(args, f.Limit+1)
	return `SELECT ` + messageColumns + ` FROM messages WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY created_at DESC, id DESC LIMIT ?`, args, nil
}
