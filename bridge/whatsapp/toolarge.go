package whatsapp

import (
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
)

// MaxIncomingCiphertext bounds the encrypted message a contact sends that
// the bridge decrypts (whatsmeow's Client.MaxIncomingCiphertext, our patch
// 0004). Decrypting holds the ciphertext, the plaintext, its copy in the
// decrypted-event buffer and the decoded strings at once: one 12 MB text
// took a bridge from 34 to 301 MB of peak memory, past the chart's 256 Mi
// limit. 2 MiB holds any message a WhatsApp app sends (a text is at most
// 65,536 characters, a thumbnail tens of kilobytes) with room to spare;
// what is bigger is recorded as too large, with its size, not decrypted.
const MaxIncomingCiphertext = 2 << 20

// TooLargeField names the cut of a message that was not decrypted at all:
// the whole message, of Size bytes of ciphertext.
const TooLargeField = "message"

// tooLarge records a message whatsmeow did not decrypt because it was over
// MaxIncomingCiphertext as an incoming text without text, its size in
// Truncated, so that a contact's message is never dropped in silence; the
// ack waits for the store as a decrypted message's does. false: not stored
// (the disk is low), unacked, delivered again.
func (m *Session) tooLarge(cli *whatsmeow.Client, e *events.UndecryptableMessage) bool {
	if !e.TooLarge || e.Info.IsFromMe || e.Info.Chat == types.StatusBroadcastJID {
		return true
	}
	if m.diskLow.Load() {
		return false
	}
	in, err := senderOf(m.bgCtx, cli, e.Info.Sender, e.Info.SenderAlt)
	chat, errChat := recipientOf(m.bgCtx, cli, e.Info.Chat, types.EmptyJID)
	if err != nil || errChat != nil {
		return true
	}
	in.WhatsAppID, in.PushName, in.Timestamp, in.Chat = e.Info.ID, e.Info.PushName, e.Info.Timestamp, chat
	in.Type = "text"
	in.Truncated = []bridge.Cut{{Field: TooLargeField, Size: e.CiphertextSize}}
	m.acks.handed(&e.Info, m.opts.Events.Incoming(m.bgCtx, in))
	return true
}
