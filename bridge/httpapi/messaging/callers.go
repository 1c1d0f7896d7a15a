package messaging

import (
	"encoding/json"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// listableChat is the chat a key with an allowlist may list: the one the
// query names, which must be in the allowlist; a list of every chat is
// refused.
func listableChat(c bridge.Caller, chat bridge.Recipient) error {
	if c.AllChats() {
		return nil
	}
	if chat.IsZero() {
		return bridge.Errorf(bridge.KindForbidden, bridge.CodeChatNotAllowed,
			"the key %q may read some chats only: name one with chat=", c.Name)
	}
	return c.RequireChat(chat)
}

// eventChat is the chat fields of an event's payload, whichever its type
// names: a message's chat, a status's recipient, a group's id, a call's
// caller.
type eventChat struct {
	Chat      string `json:"chat"`
	Recipient string `json:"recipient"`
	Group     string `json:"group"`
	From      string `json:"from"`
}

// eventAllowed reports whether caller may see ev: every event for a key
// without an allowlist; else the events of its chats, and the link's
// state (session.status), which names no chat. An event whose chat cannot
// be read is withheld: an allowlist errs on the side of silence.
func eventAllowed(caller bridge.Caller, ev webhook.Logged) bool {
	if caller.AllChats() || ev.Type == webhook.TypeSessionStatus {
		return true
	}
	var c eventChat
	if err := json.Unmarshal(ev.Payload, &c); err != nil {
		return false
	}
	for _, s := range []string{c.Chat, c.Recipient, c.Group, c.From} {
		if s == "" {
			continue
		}
		chat, err := bridge.RecipientFromJID(s)
		if err != nil {
			chat, err = bridge.ParseRecipient(s)
		}
		return err == nil && caller.MayReach(chat)
	}
	return false
}
