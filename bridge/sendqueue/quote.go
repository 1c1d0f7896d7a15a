package sendqueue

import (
	"context"
	"database/sql"
	"errors"

	"github.com/msgbridge/msgbridge/bridge"
)

// Quoted finds a message the bridge sent to chat by its WhatsApp id, for a
// reply that quotes it: its sender is the linked account (the zero
// Recipient) and its text is its body or caption. false when the log has no
// such message in that chat (it may be one the bridge received).
func (l *MessageLog) Quoted(ctx context.Context, chat bridge.Recipient, whatsappID string) (bridge.Quoted, bool, error) {
	var body string
	err := l.db.QueryRowContext(ctx, `SELECT body FROM messages WHERE whatsapp_id = ? AND recipient = ?`,
		whatsappID, chat.JID()).Scan(&body)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return bridge.Quoted{}, false, nil
	case err != nil:
		return bridge.Quoted{}, false, readFailed(err)
	}
	return bridge.Quoted{Text: body}, true, nil
}
