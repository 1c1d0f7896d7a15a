package whatsapp

import (
	"context"
	"encoding/hex"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
)

// incoming maps a received message to the domain's Incoming; ok is false
// for what is not a message a person wrote or changed: our own messages,
// protocol messages other than edits and revokes (key shares, history
// sync), messages whose only content is something else, such as the
// SenderKeyDistributionMessage that precedes a sender's first group
// message, and messages in chats the bridge cannot address
// (newsletters). A contact's status is no chat's message: statusUpdate
// reads it.
func incoming(ctx context.Context, cli *whatsmeow.Client, e *events.Message) (bridge.Incoming, bool) {
	if e.Info.IsFromMe || e.Message == nil || e.Info.Chat == types.StatusBroadcastJID {
		return bridge.Incoming{}, false
	}
	from, err := senderOf(ctx, cli, e.Info.Sender, e.Info.SenderAlt)
	chat, errChat := recipientOf(ctx, cli, e.Info.Chat, types.EmptyJID)
	if err != nil || errChat != nil {
		return bridge.Incoming{}, false
	}
	from.WhatsAppID, from.PushName, from.Timestamp, from.Chat = e.Info.ID, e.Info.PushName, e.Info.Timestamp, chat
	in := from
	if !content(ctx, cli, e.Message, &in) {
		return bridge.Incoming{}, false
	}
	return in, true
}

// senderOf names a sender by both its addresses: the LID and the phone
// number, each from the message (sender, alt) or, failing that, from the
// LID/phone pairs whatsmeow learnt; From is the phone number when known.
func senderOf(ctx context.Context, cli *whatsmeow.Client, sender, alt types.JID) (bridge.Incoming, error) {
	sender, alt = sender.ToNonAD(), alt.ToNonAD()
	var lid, pn types.JID
	switch sender.Server {
	case types.HiddenUserServer:
		lid, pn = sender, alt
		if pn.Server != types.DefaultUserServer && cli.Store.LIDs != nil {
			pn, _ = cli.Store.LIDs.GetPNForLID(ctx, lid)
		}
	case types.DefaultUserServer:
		pn, lid = sender, alt
		if lid.Server != types.HiddenUserServer && cli.Store.LIDs != nil {
			lid, _ = cli.Store.LIDs.GetLIDForPN(ctx, pn) // nil store: a client that never linked
		}
	default:
		from, err := bridge.RecipientFromJID(sender.String())
		return bridge.Incoming{From: from}, err
	}
	var in bridge.Incoming
	if !lid.IsEmpty() {
		in.FromLID, _ = bridge.RecipientFromJID(lid.ToNonAD().String())
	}
	if !pn.IsEmpty() {
		in.FromPhone, _ = bridge.RecipientFromJID(pn.ToNonAD().String())
	}
	in.From = in.FromPhone
	if in.From.IsZero() {
		in.From = in.FromLID
	}
	if in.From.IsZero() {
		return in, bridge.ErrInvalidRecipient
	}
	return in, nil
}

// content fills in's type, text, media and context from msg; false when
// msg holds nothing the webhooks report. Whatever it filled is bounded
// (bridge.Incoming.Bound) before anything stores or fans it out: the
// sender's client chooses every size.
func content(ctx context.Context, cli *whatsmeow.Client, msg *waE2E.Message, in *bridge.Incoming) bool {
	defer in.Bound()
	if acts, ok := actsOnEarlier(msg, in); acts {
		return ok
	}
	var info *waE2E.ContextInfo
	switch {
	case msg.Conversation != nil:
		in.Type, in.Text = "text", msg.GetConversation()
	case msg.ExtendedTextMessage != nil:
		m := msg.GetExtendedTextMessage()
		in.Type, in.Text, info = "text", m.GetText(), m.GetContextInfo()
	case msg.LocationMessage != nil:
		m := msg.GetLocationMessage()
		in.Type, in.Text, info = "location", m.GetComment(), m.GetContextInfo()
		in.Location = &bridge.Location{Latitude: m.GetDegreesLatitude(), Longitude: m.GetDegreesLongitude(), Name: m.GetName(), Address: m.GetAddress()}
	case msg.ContactMessage != nil:
		m := msg.GetContactMessage()
		in.Type, info = "contact", m.GetContextInfo()
		in.Contacts = []bridge.ContactCard{{DisplayName: m.GetDisplayName(), VCard: m.GetVcard()}}
	case msg.ContactsArrayMessage != nil:
		m := msg.GetContactsArrayMessage()
		in.Type, in.Text, info = "contact", m.GetDisplayName(), m.GetContextInfo()
		for _, c := range m.GetContacts() {
			in.Contacts = append(in.Contacts, bridge.ContactCard{DisplayName: c.GetDisplayName(), VCard: c.GetVcard()})
		}
	case msg.InteractiveResponseMessage != nil, msg.ButtonsResponseMessage != nil, msg.ListResponseMessage != nil:
		var ok bool
		if info, ok = interactiveReply(msg, in); !ok {
			return false
		}
	default:
		var ok bool
		if info, ok = attachment(msg, in); !ok {
			return false
		}
	}
	in.Quoted = info.GetStanzaID()
	for _, jid := range info.GetMentionedJID() {
		if r, err := mentioned(ctx, cli, jid); err == nil {
			in.Mentions = append(in.Mentions, r)
		}
	}
	return true
}

// actsOnEarlier reads a message that acts on an earlier one: an edit or a
// revoke, a vote on a poll, a reaction. acts is false for any other
// message; ok tells whether it is one the webhooks report.
func actsOnEarlier(msg *waE2E.Message, in *bridge.Incoming) (acts, ok bool) {
	if p := msg.GetProtocolMessage(); p != nil {
		return true, change(p, in)
	}
	if u := msg.GetPollUpdateMessage(); u != nil {
		// Encrypted with the poll's secret: the link decrypts it (readVote).
		in.Type, in.TargetID = bridge.IncomingPollVote, u.GetPollCreationMessageKey().GetID()
		return true, in.TargetID != ""
	}
	if r := msg.GetReactionMessage(); r != nil {
		in.Type, in.TargetID, in.Emoji = bridge.IncomingReaction, r.GetKey().GetID(), r.GetText()
		return true, true
	}
	return false, false
}

// change reads an edit or a revoke; other protocol messages are not
// reported.
func change(p *waE2E.ProtocolMessage, in *bridge.Incoming) bool {
	in.TargetID = p.GetKey().GetID()
	switch p.GetType() {
	case waE2E.ProtocolMessage_REVOKE:
		in.Type = bridge.IncomingRevoke
	case waE2E.ProtocolMessage_MESSAGE_EDIT:
		in.Type = bridge.IncomingEdit
		edited := p.GetEditedMessage()
		in.Text = edited.GetConversation()
		if in.Text == "" {
			in.Text = edited.GetExtendedTextMessage().GetText()
		}
		if in.Text == "" { // an edited caption
			in.Text = caption(edited)
		}
	default:
		return false
	}
	return in.TargetID != ""
}

// mentioned is the recipient a mention names (a JID string in the
// message); a LID whose phone number is known is named by the number.
func mentioned(ctx context.Context, cli *whatsmeow.Client, s string) (bridge.Recipient, error) {
	jid, err := types.ParseJID(s)
	if err != nil {
		return bridge.Recipient{}, err
	}
	return recipientOf(ctx, cli, jid, types.EmptyJID)
}

// recipientOf is whom a JID names: a user by phone number when it is known,
// mapping a hidden (@lid) one through alt or the store's LID map; a group,
// or a LID that does not map, as itself.
func recipientOf(ctx context.Context, cli *whatsmeow.Client, jid, alt types.JID) (bridge.Recipient, error) {
	jid = jid.ToNonAD()
	if jid.Server == types.HiddenUserServer {
		if alt.Server == types.DefaultUserServer {
			jid = alt.ToNonAD()
		} else if cli.Store.LIDs == nil {
			// a client that never linked knows no pairs
		} else if pn, err := cli.Store.LIDs.GetPNForLID(ctx, jid); err == nil && !pn.IsEmpty() {
			jid = pn.ToNonAD()
		}
	}
	return bridge.RecipientFromJID(jid.String())
}

// hexSum is a SHA-256 as the webhooks show it.
func hexSum(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return hex.EncodeToString(b)
}
