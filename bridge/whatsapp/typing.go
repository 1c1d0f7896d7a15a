package whatsapp

import (
	"context"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge"
)

// showTyping shows "composing" in the chat for TYPING_DELAY's time for
// out's text, then "paused", before a text is sent: a person types before
// a message arrives, a machine does not. Other types and an off delay
// send at once.
func (m *Session) showTyping(ctx context.Context, cli *whatsmeow.Client, to types.JID, out bridge.Outgoing) error {
	d := m.opts.TypingDelay.For(out.Text)
	// No one watches a status or a channel post being typed.
	if out.Type != bridge.TypeText || d == 0 || out.Status != nil || out.Recipient.Kind == bridge.RecipientChannel {
		return nil
	}
	if err := cli.SendChatPresence(ctx, to, types.ChatPresenceComposing, ""); err != nil {
		return fmt.Errorf("show typing: %w", err)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-timer.C:
	}
	if err := cli.SendChatPresence(ctx, to, types.ChatPresencePaused, ""); err != nil {
		return fmt.Errorf("end typing: %w", err)
	}
	return nil
}
