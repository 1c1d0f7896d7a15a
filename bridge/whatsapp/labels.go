package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.mau.fi/whatsmeow/appstate"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
)

// Labels (WhatsApp Business) live in WhatsApp's app state: every device of
// the account writes changes as encrypted patches with the keys the phone
// shared, and reads the others'. whatsmeow reports each change read
// (events.LabelEdit, LabelAssociationChat, LabelAssociationMessage), the
// bridge's own too once WhatsApp took them; the LabelBook keeps what they
// add up to in bridge.db, since app state reports a change once.

// LabelEvents hears every label change (label.*); it runs on whatsmeow's
// event goroutine.
type LabelEvents interface {
	LabelChanged(ctx context.Context, c bridge.LabelChange) error
}

// labelEvent handles whatsmeow's label events.
func (m *Session) labelEvent(raw any) {
	if m.opts.Labels == nil {
		return
	}
	var c bridge.LabelChange
	switch e := raw.(type) {
	case *events.LabelEdit:
		c = bridge.LabelChange{Label: e.LabelID, Kind: bridge.LabelEdited, Name: e.Action.GetName(),
			Color: int(e.Action.GetColor()), Deleted: e.Action.GetDeleted(), At: e.Timestamp}
	case *events.LabelAssociationChat:
		c = bridge.LabelChange{Label: e.LabelID, Kind: bridge.LabelChat, Chat: e.JID.ToNonAD().String(),
			Labeled: e.Action.GetLabeled(), At: e.Timestamp}
	case *events.LabelAssociationMessage:
		c = bridge.LabelChange{Label: e.LabelID, Kind: bridge.LabelMessage, Chat: e.JID.ToNonAD().String(),
			MessageID: e.MessageID, Labeled: e.Action.GetLabeled(), At: e.Timestamp}
	default:
		return
	}
	if c.At.IsZero() {
		c.At = m.opts.Now()
	}
	// App state is not redelivered: a change that cannot be stored now is
	// logged, and the next full sync of the labels brings it back.
	if err := m.opts.Labels.LabelChanged(m.bgCtx, c); err != nil {
		m.log.Error(err, "store label change", "label", c.Label, "kind", c.Kind)
	}
}

// sendLabelPatch writes a label change into the account's app state and,
// once WhatsApp took it, reports it at once: whatsmeow reports it again
// later, from its own goroutine, when it reads the patch back, and a
// client that changed a label must see it in the next list.
func (m *Session) sendLabelPatch(ctx context.Context, patch appstate.PatchInfo, c bridge.LabelChange) error {
	cli, err := m.readyClient()
	if err != nil {
		return err
	}
	if id, err := cli.Store.AppStateKeys.GetLatestAppStateSyncKeyID(ctx); err != nil || id == nil {
		return bridge.ErrLabelsUnavailable
	}
	if err := cli.SendAppState(ctx, patch); err != nil {
		return fmt.Errorf("write app state: %w", err)
	}
	if m.opts.Labels == nil {
		return nil
	}
	c.At = m.opts.Now()
	return m.opts.Labels.LabelChanged(ctx, c)
}

// LabelBook is the account's labels: read from bridge.db (what app state
// reported), changed through the session's app state.
type LabelBook struct {
	m  *Session
	db *sql.DB
}

// NewLabelBook returns the labels kept in db, changed through m.
func NewLabelBook(m *Session, db *sql.DB) *LabelBook { return &LabelBook{m: m, db: db} }

// Labels lists the labels with their chats, by id.
func (b *LabelBook) Labels(ctx context.Context) ([]bridge.Label, error) {
	rows, err := b.db.QueryContext(ctx, `SELECT id, name, color FROM labels`)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []bridge.Label
	for rows.Next() {
		var l bridge.Label
		if err := rows.Scan(&l.ID, &l.Name, &l.Color); err != nil {
			return nil, err
		}
		l.Chats = []string{}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b bridge.Label) int { return compareIDs(a.ID, b.ID) })
	chats, err := b.labelledChats(ctx)
	for i := range out {
		out[i].Chats = append(out[i].Chats, chats[out[i].ID]...)
	}
	return out, err
}

// labelledChats are the chats of each label, sorted.
func (b *LabelBook) labelledChats(ctx context.Context) (map[string][]string, error) {
	rows, err := b.db.QueryContext(ctx, `SELECT label_id, chat FROM label_chats ORDER BY chat`)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := map[string][]string{}
	for rows.Next() {
		var id, chat string
		if err := rows.Scan(&id, &chat); err != nil {
			return nil, err
		}
		out[id] = append(out[id], chat)
	}
	return out, rows.Err()
}

// compareIDs orders label ids as numbers ("2" before "10").
func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// label is one label, or bridge.ErrLabelNotFound.
func (b *LabelBook) label(ctx context.Context, id string) (bridge.Label, error) {
	l := bridge.Label{ID: id}
	err := b.db.QueryRowContext(ctx, `SELECT name, color FROM labels WHERE id = ?`, id).Scan(&l.Name, &l.Color)
	if errors.Is(err, sql.ErrNoRows) {
		return l, bridge.ErrLabelNotFound
	}
	return l, err
}

// CreateLabel makes a label with the next free id.
func (b *LabelBook) CreateLabel(ctx context.Context, name string, color int) (bridge.Label, error) {
	var last sql.NullInt64
	if err := b.db.QueryRowContext(ctx, `SELECT MAX(CAST(id AS INTEGER)) FROM labels`).Scan(&last); err != nil {
		return bridge.Label{}, err
	}
	l := bridge.Label{ID: strconv.FormatInt(last.Int64+1, 10), Name: name, Color: color, Chats: []string{}}
	return l, b.m.sendLabelPatch(ctx, appstate.BuildLabelEdit(l.ID, name, int32(color), false), editOf(l, false)) //nolint:gosec // color is 0-19
}

func editOf(l bridge.Label, deleted bool) bridge.LabelChange {
	return bridge.LabelChange{Label: l.ID, Kind: bridge.LabelEdited, Name: l.Name, Color: l.Color, Deleted: deleted}
}

// UpdateLabel renames or recolours a label; nil leaves a field as it is.
func (b *LabelBook) UpdateLabel(ctx context.Context, id string, name *string, color *int) (bridge.Label, error) {
	l, err := b.label(ctx, id)
	if err != nil {
		return l, err
	}
	if name != nil {
		l.Name = *name
	}
	if color != nil {
		l.Color = *color
	}
	return l, b.m.sendLabelPatch(ctx, appstate.BuildLabelEdit(id, l.Name, int32(l.Color), false), editOf(l, false)) //nolint:gosec // color is 0-19
}

// DeleteLabel deletes a label (from every chat and message too).
func (b *LabelBook) DeleteLabel(ctx context.Context, id string) error {
	l, err := b.label(ctx, id)
	if err != nil {
		return err
	}
	return b.m.sendLabelPatch(ctx, appstate.BuildLabelEdit(id, l.Name, int32(l.Color), true), editOf(l, true)) //nolint:gosec // color is 0-19
}

// LabelChat puts a label on a chat, or takes it off.
func (b *LabelBook) LabelChat(ctx context.Context, id string, chat bridge.Recipient, labeled bool) error {
	jid, err := b.target(ctx, id, chat)
	if err != nil {
		return err
	}
	return b.m.sendLabelPatch(ctx, appstate.BuildLabelChat(jid, id, labeled),
		bridge.LabelChange{Label: id, Kind: bridge.LabelChat, Chat: jid.String(), Labeled: labeled})
}

// LabelMessage puts a label on a message of a chat, or takes it off.
func (b *LabelBook) LabelMessage(ctx context.Context, id string, chat bridge.Recipient, messageID string, labeled bool) error {
	jid, err := b.target(ctx, id, chat)
	if err != nil {
		return err
	}
	return b.m.sendLabelPatch(ctx, appstate.BuildLabelMessage(jid, id, messageID, labeled),
		bridge.LabelChange{Label: id, Kind: bridge.LabelMessage, Chat: jid.String(), MessageID: messageID, Labeled: labeled})
}

// target checks that the label exists and reads the chat's JID.
func (b *LabelBook) target(ctx context.Context, id string, chat bridge.Recipient) (types.JID, error) {
	if _, err := b.label(ctx, id); err != nil {
		return types.EmptyJID, err
	}
	return types.ParseJID(chat.JID())
}

// Apply records a change in tx: a label edited or deleted (with its
// associations), a chat or message labelled or not. It reports whether
// anything changed: the bridge's own change is applied when WhatsApp took
// it and again when app state reports it back, and only the first is news.
func (b *LabelBook) Apply(ctx context.Context, tx *sql.Tx, c bridge.LabelChange) (bool, error) {
	var res sql.Result
	var err error
	switch {
	case c.Kind == bridge.LabelEdited && c.Deleted:
		if res, err = tx.ExecContext(ctx, `DELETE FROM labels WHERE id = ?`, c.Label); err == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM label_chats WHERE label_id = ?`, c.Label)
		}
		if err == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM label_messages WHERE label_id = ?`, c.Label)
		}
	case c.Kind == bridge.LabelEdited:
		res, err = tx.ExecContext(ctx, `INSERT INTO labels (id, name, color, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name, color = excluded.color, updated_at = excluded.updated_at
			WHERE name <> excluded.name OR color <> excluded.color`,
			c.Label, c.Name, c.Color, c.At.UnixMilli())
	case c.Kind == bridge.LabelChat && c.Labeled:
		res, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO label_chats (label_id, chat) VALUES (?, ?)`, c.Label, c.Chat)
	case c.Kind == bridge.LabelChat:
		res, err = tx.ExecContext(ctx, `DELETE FROM label_chats WHERE label_id = ? AND chat = ?`, c.Label, c.Chat)
	case c.Kind == bridge.LabelMessage && c.Labeled:
		res, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO label_messages (label_id, chat, message_id) VALUES (?, ?, ?)`,
			c.Label, c.Chat, c.MessageID)
	case c.Kind == bridge.LabelMessage:
		res, err = tx.ExecContext(ctx, `DELETE FROM label_messages WHERE label_id = ? AND chat = ? AND message_id = ?`,
			c.Label, c.Chat, c.MessageID)
	default:
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// ChatLabels are the labels on each chat, for the dashboard.
func (b *LabelBook) ChatLabels(ctx context.Context) (map[string][]bridge.Label, error) {
	labels, err := b.Labels(ctx)
	out := map[string][]bridge.Label{}
	for _, l := range labels {
		for _, chat := range l.Chats {
			out[chat] = append(out[chat], bridge.Label{ID: l.ID, Name: l.Name, Color: l.Color})
		}
	}
	return out, err
}
