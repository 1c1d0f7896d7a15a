package history

import (
	"context"
	"database/sql"
	"errors"

	"github.com/msgbridge/msgbridge/bridge"
)

// Chat is one chat of the overview.
type Chat struct {
	// Chat is as the API shows it; Name the name its contact gave WhatsApp
	// (a contact's own words: third-party), empty when unknown or a group.
	Chat, Name string
	// Unread counts the messages received since the account last read the
	// chat (a read mark) or wrote in it.
	Unread int
	// Last is its newest message, either way.
	Last Message
}

// Chats returns the limit chats with the newest messages, newest first.
// The status broadcast is no chat.
func (s *Store) Chats(ctx context.Context, limit int) ([]Chat, error) {
	if limit < 1 {
		return nil, bridge.Invalid(bridge.CodeInvalidLimit, "limit must be at least 1")
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT chat FROM (
		SELECT CASE WHEN instr(chat, '@') = 0 THEN chat || '@s.whatsapp.net' ELSE chat END AS chat, MAX(received_at) AS at
			FROM inbox WHERE chat <> ?1 GROUP BY chat
		UNION ALL SELECT recipient, MAX(created_at) FROM messages WHERE recipient <> ?1 GROUP BY recipient)
		GROUP BY chat ORDER BY MAX(at) DESC LIMIT ?2`, bridge.StatusJID, limit)
	if err != nil {
		return nil, readFailed(err)
	}
	var jids []string
	for rows.Next() {
		var jid string
		if err := rows.Scan(&jid); err != nil {
			_ = rows.Close()
			return nil, readFailed(err)
		}
		jids = append(jids, jid)
	}
	if err := rows.Close(); err != nil {
		return nil, readFailed(err)
	}
	chats := make([]Chat, 0, len(jids))
	for _, jid := range jids {
		c, err := s.chat(ctx, jid)
		if err != nil {
			return nil, err
		}
		chats = append(chats, c)
	}
	return chats, nil
}

// chat is the overview of the chat with JID jid.
func (s *Store) chat(ctx context.Context, jid string) (Chat, error) {
	r, err := bridge.RecipientFromJID(jid)
	if err != nil {
		return Chat{}, readFailed(err)
	}
	c := Chat{Chat: r.String()}
	last, _, err := s.Messages(ctx, r, 1, "")
	if err != nil {
		return Chat{}, err
	}
	if len(last) == 1 {
		c.Last = last[0]
	}
	// The newest name the contact gave, and what arrived since the account
	// last read or wrote: a read mark, or its own newest message.
	err = s.DB.QueryRowContext(ctx, `SELECT
		COALESCE((SELECT push_name FROM inbox WHERE chat = ?1 AND push_name <> '' AND chat NOT LIKE '%@g.us'
			ORDER BY received_at DESC LIMIT 1), ''),
		(SELECT count(*) FROM inbox WHERE chat = ?1 AND event = 'message.upsert' AND received_at > MAX(
			COALESCE((SELECT read_at FROM chat_reads WHERE chat = ?2), 0),
			COALESCE((SELECT MAX(created_at) FROM messages WHERE recipient = ?2), 0)))`,
		r.String(), r.JID()).Scan(&c.Name, &c.Unread)
	if err != nil {
		return Chat{}, readFailed(err)
	}
	return c, nil
}

// MarkRead records that the account read chat up to now: its unread count
// starts again from here. Called after WhatsApp took the read receipt,
// whichever door asked for it.
func (s *Store) MarkRead(ctx context.Context, chat bridge.Recipient) error {
	mark := func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO chat_reads (chat, read_at) VALUES (?, ?)
			ON CONFLICT (chat) DO UPDATE SET read_at = MAX(read_at, excluded.read_at)`, chat.JID(), s.now().UnixMilli())
		return err
	}
	var err error
	if s.Writer != nil {
		err = s.Writer.Do(ctx, mark)
	} else {
		err = inTx(ctx, s.DB, mark)
	}
	if err != nil {
		return bridge.Internal(bridge.CodeStoreFailed, "the read mark could not be stored", err)
	}
	return nil
}

// inTx runs fn in a transaction of its own on db.
func inTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// MediaChat is the chat an incoming attachment came in (as the API shows
// it); found is false for an unknown id.
func (s *Store) MediaChat(ctx context.Context, id string) (chat string, found bool, err error) {
	err = s.DB.QueryRowContext(ctx, `SELECT chat FROM media WHERE id = ?`, id).Scan(&chat)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, readFailed(err)
	}
	return chatOf(chat), true, nil
}
