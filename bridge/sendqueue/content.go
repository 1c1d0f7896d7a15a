package sendqueue

import (
	"context"

	"github.com/msgbridge/msgbridge/bridge"
)

// Said is a logged message with what it said: the dashboard's conversation
// shows the account's own messages as it shows received ones.
type Said struct {
	bridge.Message
	Text     string // a text's body, a caption, an edit's new text
	FileName string // an attachment's name (its file is deleted once sent)
	MimeType string
	ReplyTo  string // the WhatsApp id of the message it quotes
	TargetID string // the WhatsApp id a reaction, edit or revoke acts on
	Emoji    string // a reaction's; empty removes it
	Poll     *bridge.Poll
	Location *bridge.Location
	Contact  *bridge.ContactCard
}

// ListSaid is List with what each message said, for the dashboard.
func (l *MessageLog) ListSaid(ctx context.Context, f Filter) ([]Said, string, error) {
	query, args, err := listQuery(f)
	if err != nil {
		return nil, "", err
	}
	// The action's columns, read after the ones scanRow reads.
	query = "SELECT target_id, emoji, " + query[len("SELECT "):]
	rows, err := l.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, "", readFailed(err)
	}
	defer func() { _ = rows.Close() }()
	var out []Said
	for rows.Next() {
		var s Said
		m, err := scanRow(prefixed{rows, []any{&s.TargetID, &s.Emoji}})
		if err != nil {
			return nil, "", readFailed(err)
		}
		s.Message, s.Text, s.FileName, s.MimeType, s.ReplyTo = m.Message, m.body, m.fileName, m.mimeType, m.replyTo
		s.Poll, s.Location, s.Contact = m.details.poll(), m.details.location(), m.details.contact()
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, "", readFailed(err)
	}
	if len(out) <= f.Limit {
		return out, "", nil
	}
	out = out[:f.Limit]
	last := out[len(out)-1]
	return out, bridge.EncodeCursor(last.CreatedAt.UnixMilli(), last.ID), nil
}

// prefixed scans columns selected before the ones a scanner reads into
// extra.
type prefixed struct {
	rowScanner
	extra []any
}

func (p prefixed) Scan(dest ...any) error {
	return p.rowScanner.Scan(append(append([]any{}, p.extra...), dest...)...)
}
