package messaging

import (
	"context"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// Chats is what the chat endpoints need of the session (*whatsapp.Session).
// Both fail with bridge.ErrNotLinked while no session is connected.
type Chats interface {
	// MarkRead marks chat read up to message id, which sender sent (zero:
	// the chat itself, in a 1:1 chat).
	MarkRead(ctx context.Context, chat, sender bridge.Recipient, id string) error
	SetPresence(ctx context.Context, chat bridge.Recipient, p bridge.ChatPresence) error
}

// parseChat accepts a chat as a path or query names it: a phone number
// with its country code (digits, an optional leading '+'), a group JID
// <id>@g.us, a LID <digits>@lid or a user JID <digits>@s.whatsapp.net.
// Spaces and dashes, which a form tolerates, are refused in a URL.
func parseChat(s string) (bridge.Recipient, error) {
	bad := bridge.Invalid(bridge.CodeInvalidChat, "chat must be a number with country code, <id>@g.us, <digits>@lid or <digits>@s.whatsapp.net")
	if s == "" || strings.ContainsAny(s, " \t\r\n") || (strings.Contains(s, "-") && !strings.HasSuffix(s, "@g.us")) {
		return bridge.Recipient{}, bad
	}
	r, err := bridge.ParseRecipient(s)
	if err != nil {
		return bridge.Recipient{}, bad
	}
	return r, nil
}

type readBody struct {
	MessageID *string `json:"message_id"`
	Sender    *string `json:"sender"`
}

// markRead is POST /api/chats/{jid}/read {"message_id", "sender"}: a read
// receipt for a received message (and so for the chat up to it); sender
// is who sent it, required in a group. Not queued: 503 while not connected.
func (s *server) markRead(w http.ResponseWriter, r *http.Request) error {
	chat, err := parseChat(mux.Vars(r)["jid"])
	if err != nil {
		return err
	}
	var body readBody
	if err := httpkit.DecodeJSON(w, r, &body); err != nil {
		return err
	}
	if body.MessageID == nil {
		return bridge.Invalid(bridge.CodeMissingMessageID, `the body needs "message_id", the WhatsApp id of a received message`)
	}
	id, err := parseMessageID(*body.MessageID)
	if err != nil {
		return err
	}
	sender, err := readSender(chat, body.Sender)
	if err != nil {
		return err
	}
	if err := s.received(r.Context(), chat, id); err != nil {
		return err
	}
	if err := s.Chats.MarkRead(r.Context(), chat, sender, id); err != nil {
		return httpkit.SessionError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// readSender is who sent the message a read mark names: required in a
// group, refused elsewhere (the chat is the sender).
func readSender(chat bridge.Recipient, sender *string) (bridge.Recipient, error) {
	if chat.Kind != bridge.RecipientGroup {
		if sender != nil {
			return bridge.Recipient{}, bridge.Invalid(bridge.CodeUnexpectedSender, `"sender" is only for a message received in a group`)
		}
		return bridge.Recipient{}, nil
	}
	if sender == nil {
		return bridge.Recipient{}, bridge.Invalid(bridge.CodeMissingSender, `a message received in a group needs "sender", who sent it`)
	}
	r, err := parseChat(*sender)
	if err != nil || r.Kind == bridge.RecipientGroup {
		return bridge.Recipient{}, bridge.Invalid(bridge.CodeInvalidSender, "sender must be a phone number or a LID")
	}
	return r, nil
}

type presenceBody struct {
	State *string `json:"state"`
}

// setPresence is POST /api/chats/{jid}/presence {"state"}: composing,
// recording or paused, best effort; 503 while not connected.
func (s *server) setPresence(w http.ResponseWriter, r *http.Request) error {
	chat, err := parseChat(mux.Vars(r)["jid"])
	if err != nil {
		return err
	}
	var body presenceBody
	if err := httpkit.DecodeJSON(w, r, &body); err != nil {
		return err
	}
	if body.State == nil {
		return bridge.Invalid(bridge.CodeMissingState, `the body needs "state": composing, recording or paused`)
	}
	p, err := bridge.ParseChatPresence(*body.State)
	if err != nil {
		return err
	}
	if err := s.chatKnown(r.Context(), chat); err != nil {
		return err
	}
	if err := s.Chats.SetPresence(r.Context(), chat, p); err != nil {
		return httpkit.SessionError(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Errors of read marks and chat states the account has no business
// sending: each would show WhatsApp a machine probing chats.
var (
	errNotReceived = bridge.Errorf(bridge.KindNotFound, bridge.CodeUnknownMessage,
		"message_id names no message received in this chat that the incoming history keeps")
	errUnknownChat = bridge.Errorf(bridge.KindNotFound, bridge.CodeUnknownChat,
		"the account has no such chat: nothing received in it, and not a number known to be on WhatsApp")
)

// received checks that the account received message id in chat. The
// sender is not compared: the history may know a group member by LID where
// the caller names the number.
func (s *server) received(ctx context.Context, chat bridge.Recipient, id string) error {
	gotChat, _, found, err := s.Inbox.Received(ctx, id)
	switch {
	case err != nil:
		return err
	case !found || gotChat.JID() != chat.JID():
		return errNotReceived
	}
	return nil
}

// chatKnown checks that chat is one the account has: it received something
// in it, or (a number) WhatsApp said lately that the number is on it.
func (s *server) chatKnown(ctx context.Context, chat bridge.Recipient) error {
	has, err := s.Inbox.HasChat(ctx, chat)
	if err != nil || has {
		return err
	}
	if chat.Kind == bridge.RecipientPhone {
		if c, ok := s.Contacts.Cached(ctx, chat.ID); ok && c.OnWhatsApp {
			return nil
		}
	}
	return errUnknownChat
}
