package inbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// Quoted finds a message the account received in chat by its WhatsApp id,
// for a reply that quotes it: its sender, text and type. false when the history
// has no such message (it may be one the bridge sent, or older than
// INBOX_RETENTION).
func (b *Inbox) Quoted(ctx context.Context, chat bridge.Recipient, whatsappID string) (bridge.Quoted, bool, error) {
	var sender, body, typ, mimeType string
	// The media type is in the stored event (its media object), as text:
	// SQLite reads a BLOB as JSONB.
	err := b.opts.DB.QueryRowContext(ctx, `SELECT sender, body, type,
		coalesce(json_extract(CAST(payload AS TEXT), '$.media.mimetype'), '') FROM inbox
		WHERE chat = ? AND whatsapp_id = ? AND event = ?`, chat.String(), whatsappID, webhook.TypeMessageUpsert).
		Scan(&sender, &body, &typ, &mimeType)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return bridge.Quoted{}, false, nil
	case err != nil:
		return bridge.Quoted{}, false, fmt.Errorf("inbox: find %s: %w", whatsappID, err)
	}
	from, err := bridge.ParseRecipient(sender)
	if err != nil {
		return bridge.Quoted{}, false, fmt.Errorf("inbox: stored sender %q: %w", sender, err)
	}
	return bridge.Quoted{Sender: from, Text: body, Type: typ, MimeType: mimeType}, true, nil
}

// Received finds the chat and sender of a message the account received, by
// its WhatsApp id alone (the latest, should two chats share an id), so that
// a reaction to it needs no ?chat=. false when the history lacks it.
func (b *Inbox) Received(ctx context.Context, whatsappID string) (chat, sender bridge.Recipient, found bool, err error) {
	var c, from string
	err = b.opts.DB.QueryRowContext(ctx, `SELECT chat, sender FROM inbox WHERE whatsapp_id = ? AND event = ?
		ORDER BY received_at DESC, id DESC LIMIT 1`, whatsappID, webhook.TypeMessageUpsert).Scan(&c, &from)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return bridge.Recipient{}, bridge.Recipient{}, false, nil
	case err != nil:
		return bridge.Recipient{}, bridge.Recipient{}, false, fmt.Errorf("inbox: find %s: %w", whatsappID, err)
	}
	if chat, err = bridge.ParseRecipient(c); err != nil {
		return bridge.Recipient{}, bridge.Recipient{}, false, fmt.Errorf("inbox: stored chat %q: %w", c, err)
	}
	if sender, err = bridge.ParseRecipient(from); err != nil {
		return bridge.Recipient{}, bridge.Recipient{}, false, fmt.Errorf("inbox: stored sender %q: %w", from, err)
	}
	return chat, sender, true, nil
}

// HasChat reports whether the account received anything in chat that the
// history still keeps: a chat the account has, where a chat state from the
// API is a person's, not a probe of a stranger.
func (b *Inbox) HasChat(ctx context.Context, chat bridge.Recipient) (bool, error) {
	var found bool
	err := b.opts.DB.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM inbox WHERE chat = ?)`, chat.String()).Scan(&found)
	if err != nil {
		return false, fmt.Errorf("inbox: find chat: %w", err)
	}
	return found, nil
}
