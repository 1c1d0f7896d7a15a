// Package history is the conversation as an assistant reads it: the chats
// with their last message and unread count, one chat's messages both ways
// (what contacts sent, from the incoming history, and what the account
// sent, from the message log), full-text search over both (the FTS5 indexes
// of bridge.db, kept by its schema), and the read marks the unread counts
// start from. It only reads what inbox and sendqueue store, in their tables.
package history

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// Direction says who wrote a message.
type Direction string

// The directions of a message.
const (
	// In: a contact wrote it; its text is third-party content.
	In Direction = "in"
	// Out: the account sent it (through any door).
	Out Direction = "out"
)

// Message is one entry of a chat's history, either way.
type Message struct {
	Direction Direction
	// ID is the WhatsApp id; LogID the message log's id of an Out message.
	ID, LogID string
	// Chat is the chat as the API shows it (bridge.Recipient's String).
	Chat string
	// Sender and SenderName are who wrote an In message (phone or LID, and
	// the name they gave WhatsApp); empty for Out.
	Sender, SenderName string
	// Type is the message's type (text, image, reaction...); Event the
	// incoming history's event (message.upsert...), empty for Out.
	Type, Event string
	Text        string
	// At is when the bridge stored it: received, or accepted to send.
	At time.Time
	// Status is an Out message's (Queued, Sent...).
	Status string
	// MediaID names an In attachment (GET /api/media/{id}); MimeType is its.
	MediaID, MimeType string
	// Quoted is the WhatsApp id an In message replies to.
	Quoted string
}

// Store reads the history from bridge.db; its one write, a read mark,
// goes through the writer.
type Store struct {
	DB *sql.DB
	// Writer runs the read marks' writes; nil writes on DB directly (tests).
	Writer *sqlite.Batcher
	// Now is the clock of read marks; time.Now when nil.
	Now func() time.Time
}

func (s *Store) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// inboxColumns and messageLogColumns are one history row, either way: at
// orders by time, k the rows of one millisecond (Out before In, then by
// id) and is the cursor's key. They read the tables as i and m.
const (
	inboxColumns = `'in' AS dir, i.received_at AS at, 'i' || printf('%020d', i.id) AS k, i.whatsapp_id, i.chat, i.sender,
		i.push_name, i.type, i.event, i.body,
		COALESCE(json_extract(CAST(i.payload AS TEXT), '$.media.id'), ''),
		COALESCE(json_extract(CAST(i.payload AS TEXT), '$.media.mimetype'), ''),
		COALESCE(json_extract(CAST(i.payload AS TEXT), '$.quoted'), ''), ''`
	messageLogColumns = `'out', m.created_at, 'o' || m.id, m.whatsapp_id, m.recipient, '', '', m.type, '', m.body, '',
		m.mimetype, '', m.status`
)

// scanMessages reads rows of inboxColumns or messageLogColumns.
func scanMessages(rows *sql.Rows) ([]Message, []string, error) {
	defer func() { _ = rows.Close() }()
	var (
		out  []Message
		keys []string
	)
	for rows.Next() {
		var (
			m       Message
			at      int64
			key     string
			dir     string
			chatCol string
		)
		if err := rows.Scan(&dir, &at, &key, &m.ID, &chatCol, &m.Sender, &m.SenderName, &m.Type, &m.Event, &m.Text,
			&m.MediaID, &m.MimeType, &m.Quoted, &m.Status); err != nil {
			return nil, nil, err
		}
		m.Direction, m.At, m.Chat = Direction(dir), time.UnixMilli(at).UTC(), chatOf(chatCol)
		if m.Direction == Out {
			m.LogID = strings.TrimPrefix(key, "o")
		}
		out, keys = append(out, m), append(keys, key)
	}
	return out, keys, rows.Err()
}

// chatOf is a chat as stored (the inbox's String form, the log's JID) in
// the API's form.
func chatOf(stored string) string {
	if r, err := bridge.RecipientFromJID(stored); err == nil {
		return r.String()
	}
	return stored
}

// Messages returns one page of chat's history both ways, newest first, and
// the cursor of the next page (empty at the end). A cursor Messages did
// not return is a bridge.Error of KindInvalid (invalid_cursor).
func (s *Store) Messages(ctx context.Context, chat bridge.Recipient, limit int, cursor string) ([]Message, string, error) {
	if limit < 1 {
		return nil, "", bridge.Invalid(bridge.CodeInvalidLimit, "limit must be at least 1")
	}
	beforeAt, beforeKey := int64(math.MaxInt64), "~"
	if cursor != "" {
		at, key, err := bridge.DecodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		if key == "" || (key[0] != 'i' && key[0] != 'o') {
			return nil, "", bridge.ErrBadCursor()
		}
		beforeAt, beforeKey = at, key
	}
	// Each way reads at most a page from its index, past the cursor; the
	// merge of the two is a page.
	rows, err := s.DB.QueryContext(ctx, `SELECT * FROM (SELECT * FROM (
			SELECT `+inboxColumns+` FROM inbox i WHERE i.chat = ?1 AND (i.received_at < ?3 OR (i.received_at = ?3 AND k < ?4))
			ORDER BY i.received_at DESC, i.id DESC LIMIT ?5)
		UNION ALL SELECT * FROM (
			SELECT `+messageLogColumns+` FROM messages m WHERE m.recipient = ?2 AND (m.created_at < ?3 OR (m.created_at = ?3 AND 'o' || m.id < ?4))
			ORDER BY m.created_at DESC, m.id DESC LIMIT ?5))
		ORDER BY at DESC, k DESC LIMIT ?5`,
		chat.String(), chat.JID(), beforeAt, beforeKey, limit+1)
	if err != nil {
		return nil, "", readFailed(err)
	}
	msgs, keys, err := scanMessages(rows)
	if err != nil {
		return nil, "", readFailed(err)
	}
	if len(msgs) <= limit {
		return msgs, "", nil
	}
	last := limit - 1
	return msgs[:limit], bridge.EncodeCursor(msgs[last].At.UnixMilli(), keys[last]), nil
}

func readFailed(err error) error {
	return bridge.Internal(bridge.CodeReadFailed, "the history could not be read", err)
}

// ReceivedIn is who sent the received message with WhatsApp id in chat;
// found is false when the incoming history does not have it.
func (s *Store) ReceivedIn(ctx context.Context, chat bridge.Recipient, id string) (sender string, found bool, err error) {
	err = s.DB.QueryRowContext(ctx, `SELECT sender FROM inbox WHERE chat = ? AND whatsapp_id = ?`, chat.String(), id).Scan(&sender)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, readFailed(err)
	}
	return sender, true, nil
}
