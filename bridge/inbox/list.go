package inbox

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Entry is one incoming event as stored.
type Entry struct {
	// WebhookID and Event are the webhook event's id and type
	// (message.upsert, message.reaction, message.edit, message.revoke).
	WebhookID string
	Event     string
	// WhatsAppID, Chat, From, FromLID, FromPhone, PushName, Type and Text
	// are as the event shows them; FromLID and FromPhone are empty when
	// unknown.
	WhatsAppID string
	Chat       string
	From       string
	FromLID    string
	FromPhone  string
	PushName   string
	Type       string
	Text       string
	// Timestamp is the sender's time, ReceivedAt when the bridge stored it.
	Timestamp  time.Time
	ReceivedAt time.Time
	// Payload is the webhook event's body.
	Payload json.RawMessage
}

// Filter selects entries of the history, newest first.
type Filter struct {
	Chat   bridge.Recipient // zero: any; else received in this chat
	Since  time.Time        // zero: any; else received at or after
	Limit  int              // at least 1
	Cursor string           // from a previous page; empty: the first page
}

const entryColumns = `id, webhook_id, event, whatsapp_id, chat, sender, sender_lid, sender_phone, push_name,
	type, body, sent_at, received_at, payload`

// List returns one page of the history, newest first by the time received,
// and the cursor of the next page (empty at the end), in the message log's
// cursor format. A cursor List did not return is a bridge.Error of
// KindInvalid (invalid_cursor), never the first page.
func (b *Inbox) List(ctx context.Context, f Filter) ([]Entry, string, error) {
	if f.Limit < 1 {
		return nil, "", bridge.Invalid(bridge.CodeInvalidLimit, "limit must be at least 1")
	}
	where, args := []string{"1 = 1"}, []any{}
	if !f.Chat.IsZero() {
		where, args = append(where, "chat = ?"), append(args, f.Chat.String()) // as Store writes it
	}
	if !f.Since.IsZero() {
		where, args = append(where, "received_at >= ?"), append(args, f.Since.UnixMilli())
	}
	if f.Cursor != "" {
		at, id, err := decodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		where, args = append(where, "(received_at < ? OR (received_at = ? AND id < ?))"), append(args, at, at, id)
	}
	args = append(args, f.Limit+1) // one more tells whether a next page exists
	entries, ids, err := b.query(ctx, `SELECT `+entryColumns+` FROM inbox WHERE `+strings.Join(where, " AND ")+
		` ORDER BY received_at DESC, id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, "", bridge.Internal(bridge.CodeReadFailed, "the incoming history could not be read", err)
	}
	if len(entries) <= f.Limit {
		return entries, "", nil
	}
	last := f.Limit - 1
	return entries[:f.Limit], bridge.EncodeCursor(entries[last].ReceivedAt.UnixMilli(), strconv.FormatInt(ids[last], 10)), nil
}

// decodeCursor is bridge.DecodeCursor whose id must be a row id as List
// writes it.
func decodeCursor(c string) (int64, int64, error) {
	at, text, err := bridge.DecodeCursor(c)
	if err != nil {
		return 0, 0, err
	}
	id, err := strconv.ParseInt(text, 10, 64)
	if err != nil || id < 1 || strconv.FormatInt(id, 10) != text {
		return 0, 0, bridge.ErrBadCursor()
	}
	return at, id, nil
}

// query reads entries and their row ids.
func (b *Inbox) query(ctx context.Context, query string, args ...any) ([]Entry, []int64, error) {
	rows, err := b.opts.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = rows.Close() }()
	entries, ids := []Entry{}, []int64{}
	for rows.Next() {
		var (
			e            Entry
			id, sent, at int64
			payload      []byte
		)
		if err := rows.Scan(&id, &e.WebhookID, &e.Event, &e.WhatsAppID, &e.Chat, &e.From, &e.FromLID, &e.FromPhone,
			&e.PushName, &e.Type, &e.Text, &sent, &at, &payload); err != nil {
			return nil, nil, err
		}
		e.Timestamp, e.ReceivedAt, e.Payload = time.UnixMilli(sent).UTC(), time.UnixMilli(at).UTC(), payload
		entries, ids = append(entries, e), append(ids, id)
	}
	return entries, ids, rows.Err()
}
