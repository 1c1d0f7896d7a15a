package whatsapp

import (
	"context"
	"fmt"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge"
)

// Account is the linked account's number, empty while none is linked: the
// account the send queue binds a message to.
func (m *Session) Account() string {
	if !m.linked.Load() {
		return ""
	}
	return m.Status().Account
}

// buildAction makes the protocol message of a reaction, edit or revoke of
// out.TargetID in out's chat. A target someone else sent names its sender
// (in a group the key needs the participant).
func buildAction(cli *whatsmeow.Client, out bridge.Outgoing) (*waE2E.Message, error) {
	chat, err := types.ParseJID(out.Recipient.JID())
	if err != nil {
		return nil, bridge.ErrInvalidRecipient
	}
	sender := types.EmptyJID
	if !out.TargetSender.IsZero() {
		if sender, err = types.ParseJID(out.TargetSender.JID()); err != nil {
			return nil, bridge.ErrInvalidRecipient
		}
	}
	switch out.Type {
	case bridge.TypeReaction:
		return cli.BuildReaction(chat, sender, out.TargetID, out.Emoji), nil
	case bridge.TypeEdit:
		return cli.BuildEdit(chat, out.TargetID, &waE2E.Message{Conversation: proto.String(out.Text)}), nil
	case bridge.TypeRevoke:
		return cli.BuildRevoke(chat, types.EmptyJID, out.TargetID), nil
	default:
		return nil, bridge.Invalid(bridge.CodeInvalidType, "%q is not an action", out.Type)
	}
}

// readyClient is the client when the session can act now.
func (m *Session) readyClient() (*whatsmeow.Client, error) {
	if !m.Ready() {
		return nil, bridge.ErrNotLinked
	}
	return m.client.Load(), nil
}

// MarkRead sends a read receipt for message id in chat, which marks the
// chat read up to it on the sender's phone; sender is who sent it (the
// chat itself for a 1:1 chat; required in a group).
func (m *Session) MarkRead(ctx context.Context, chat, sender bridge.Recipient, id string) error {
	cli, err := m.readyClient()
	if err != nil {
		return err
	}
	chatJID, err := types.ParseJID(chat.JID())
	if err != nil {
		return bridge.ErrInvalidRecipient
	}
	senderJID := chatJID
	if !sender.IsZero() {
		if senderJID, err = types.ParseJID(sender.JID()); err != nil {
			return bridge.ErrInvalidRecipient
		}
	}
	if !m.pace.markOnce(chatJID, id) {
		return nil // marked read already: once per message
	}
	if err := cli.MarkRead(ctx, []types.MessageID{id}, m.opts.Now(), chatJID, senderJID); err != nil {
		m.pace.unmark(chatJID, id)
		return fmt.Errorf("mark read: %w", err)
	}
	return nil
}

// SetPresence shows p in chat: typing, recording a voice note, or neither.
// It is best effort: WhatsApp confirms nothing. Repeats of what the chat
// shows are not sent, and a change within PresenceInterval of the last one
// is sent at the interval's end (only the latest, if it still changes
// anything).
func (m *Session) SetPresence(ctx context.Context, chat bridge.Recipient, p bridge.ChatPresence) error {
	if _, err := m.readyClient(); err != nil {
		return err
	}
	jid, err := types.ParseJID(chat.JID())
	if err != nil {
		return bridge.ErrInvalidRecipient
	}
	later := func(p bridge.ChatPresence) {
		if err := m.sendPresence(m.bgCtx, jid, p); err != nil {
			m.log.V(1).Info("chat state not sent", "err", err.Error())
		}
	}
	if !m.pace.presence(jid, p, later) {
		return nil
	}
	if err := m.sendPresence(ctx, jid, p); err != nil {
		return fmt.Errorf("chat presence: %w", err)
	}
	return nil
}
