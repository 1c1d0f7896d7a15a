package whatsapp

import (
	"slices"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/msgbridge/msgbridge/bridge"
)

// statusRecipients are the audience of a status post as whatsmeow's
// SendRequestExtra.StatusRecipients takes it (our patch): without them
// whatsmeow would send the status to the contacts of the account's status
// privacy setting, not to the ones the caller named. nil for any other
// message.
func statusRecipients(p *bridge.StatusPost) []types.JID {
	if p == nil {
		return nil
	}
	jids := make([]types.JID, 0, len(p.Recipients))
	for _, r := range p.Recipients {
		jids = append(jids, types.NewJID(r.ID, types.DefaultUserServer))
	}
	return jids
}

// statusText is a text status as WhatsApp's apps post one: an extended text
// with its background colour and font, when the caller chose them.
func statusText(out bridge.Outgoing) *waE2E.Message {
	m := &waE2E.ExtendedTextMessage{Text: proto.String(out.Text)}
	if argb := out.Status.BackgroundARGB; argb != 0 {
		m.BackgroundArgb = proto.Uint32(argb)
	}
	if f := out.Status.Font; f != nil {
		m.Font = waE2E.ExtendedTextMessage_FontType(int32(*f)).Enum() // a number of bridge.StatusFonts
	}
	return &waE2E.Message{ExtendedTextMessage: m}
}

// statusUpdate passes a contact's status on as an Incoming whose Chat is the
// status broadcast, when StatusUpdates is on; off, or for what is no text,
// image or video (the sender key that precedes a status, a reaction to
// one), it is acked and dropped: the sender key is in session.db already,
// and a status is never a message of the sender's chat.
func (m *Session) statusUpdate(cli *whatsmeow.Client, e *events.Message) bool {
	if !m.opts.StatusUpdates || e.Info.IsFromMe || e.Message == nil {
		return true
	}
	in, err := senderOf(m.bgCtx, cli, e.Info.Sender, e.Info.SenderAlt)
	if err != nil {
		return true
	}
	in.WhatsAppID, in.PushName, in.Timestamp, in.Chat = e.Info.ID, e.Info.PushName, e.Info.Timestamp, bridge.StatusBroadcast
	if !content(m.bgCtx, cli, e.Message, &in) || !slices.Contains(bridge.StatusTypes(), bridge.MessageType(in.Type)) {
		return true
	}
	in.Quoted, in.Mentions = "", nil
	m.acks.handed(&e.Info, m.opts.Events.Incoming(m.bgCtx, in))
	return true
}
