package sendqueue

import (
	"context"
	"database/sql"
	"errors"

	"github.com/msgbridge/msgbridge/bridge"
)

// Poll finds a poll the bridge sent by its WhatsApp id: its question and
// options, which name the options a vote chose. false when the log has no
// poll with that id.
func (l *MessageLog) Poll(ctx context.Context, whatsappID string) (bridge.Poll, bool, error) {
	var raw string
	err := l.db.QueryRowContext(ctx, `SELECT details FROM messages WHERE whatsapp_id = ? AND type = ?`,
		whatsappID, bridge.TypePoll).Scan(&raw)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return bridge.Poll{}, false, nil
	case err != nil:
		return bridge.Poll{}, false, readFailed(err)
	}
	d, err := decodeDetails(raw)
	if err != nil || d.Poll == nil {
		return bridge.Poll{}, false, readFailed(errors.Join(err, errors.New("a poll without its options")))
	}
	return *d.poll(), true, nil
}
