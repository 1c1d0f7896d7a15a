package wasim

import (
	"go.mau.fi/whatsmeow/proto/waE2E"
)

// What a simulated phone shows of a received message besides its text and
// attachment: the quote of a reply, the mentions, a shared place or
// contact. Tests assert these on what the client sent.

// Quote is the message a reply quotes, as the reply carries it.
type Quote struct {
	ID          string         // the quoted message's id (StanzaID)
	Participant string         // who wrote it (a user JID); empty when not given
	Message     *waE2E.Message // the quoted content shown above the reply; nil when not given
}

// contextInfo is the ContextInfo of whichever content the message carries.
func (m *Message) contextInfo() *waE2E.ContextInfo {
	c := m.Content()
	switch {
	case c == nil:
		return nil
	case c.GetExtendedTextMessage() != nil:
		return c.GetExtendedTextMessage().GetContextInfo()
	case c.GetImageMessage() != nil:
		return c.GetImageMessage().GetContextInfo()
	case c.GetVideoMessage() != nil:
		return c.GetVideoMessage().GetContextInfo()
	case c.GetAudioMessage() != nil:
		return c.GetAudioMessage().GetContextInfo()
	case c.GetDocumentMessage() != nil:
		return c.GetDocumentMessage().GetContextInfo()
	case c.GetLocationMessage() != nil:
		return c.GetLocationMessage().GetContextInfo()
	case c.GetContactMessage() != nil:
		return c.GetContactMessage().GetContextInfo()
	case c.GetStickerMessage() != nil:
		return c.GetStickerMessage().GetContextInfo()
	}
	return nil
}

// Quoted is the message this one replies to; nil when it is no reply.
func (m *Message) Quoted() *Quote {
	info := m.contextInfo()
	if info.GetStanzaID() == "" {
		return nil
	}
	return &Quote{ID: info.GetStanzaID(), Participant: info.GetParticipant(), Message: info.GetQuotedMessage()}
}

// Mentions are the JIDs the message mentions, in its order.
func (m *Message) Mentions() []string { return m.contextInfo().GetMentionedJID() }

// Location is the place the message shares; nil for other messages.
func (m *Message) Location() *waE2E.LocationMessage { return m.Content().GetLocationMessage() }

// Contact is the contact card the message shares; nil for other messages.
func (m *Message) Contact() *waE2E.ContactMessage { return m.Content().GetContactMessage() }
