package messaging

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// ActionTargets finds the message an action names (*sendqueue.Log), by its
// log id or its WhatsApp id.
type ActionTargets interface {
	FindMessage(ctx context.Context, id string) (bridge.Message, error)
	// Revoked reports whether a revoke of the message (by WhatsApp id) is
	// queued or sent.
	Revoked(ctx context.Context, whatsappID string) (bool, error)
}

// errRevoked refuses an edit or a revoke of a message revoked already: it
// could only waste a send.
var errRevoked = bridge.Errorf(bridge.KindConflict, bridge.CodeTargetRevoked, "the message is revoked (or its revoke is queued); it cannot be edited or revoked again")

// parseMessageID accepts a log id or a WhatsApp id: letters, digits and
// dashes.
func parseMessageID(id string) (string, error) { return sendqueue.ParseMessageID(id) }

// target is the message an action acts on.
type target = sendqueue.Target

// notRevoked refuses an edit or a revoke of the account's own message once
// a revoke of it is queued or sent.
func (s *server) notRevoked(ctx context.Context, t target, typ bridge.MessageType) error {
	if t.Own == nil || (typ != bridge.TypeEdit && typ != bridge.TypeRevoke) {
		return nil
	}
	revoked, err := s.Targets.Revoked(ctx, t.ID)
	if err != nil {
		return err
	}
	if revoked {
		return errRevoked
	}
	return nil
}

// resolveTarget finds the message {id} names. The log holds what the
// account sent; a received message is named by its WhatsApp id, found in
// the incoming history or, once that forgot it, with the chat (?chat=, and
// in a group ?sender=), and only a reaction may act on one. Anything else
// is 404 message_not_found.
func (s *server) resolveTarget(r *http.Request, typ bridge.MessageType) (target, error) {
	id, err := parseMessageID(mux.Vars(r)["id"])
	if err != nil {
		return target{}, err
	}
	q, err := httpkit.StrictQuery(r, "chat", "sender", "apiKey")
	if err != nil {
		return target{}, err
	}
	if q["chat"] == "" && q["sender"] == "" {
		return sendqueue.Targets{Log: s.Targets, History: s.Inbox}.Find(r.Context(), id, typ)
	}
	m, err := s.Targets.FindMessage(r.Context(), id)
	if err == nil {
		return ownTarget(m, q)
	}
	if bridge.ErrorKind(err) != bridge.KindNotFound {
		return target{}, err
	}
	if typ != bridge.TypeReaction {
		return target{}, err
	}
	if q["chat"] == "" {
		return s.historyTarget(r.Context(), id, q, err)
	}
	t, err := receivedTarget(id, q)
	if err != nil {
		return target{}, err
	}
	return t, s.sameChat(r.Context(), t)
}

// sameChat refuses a ?chat= that is not the chat the incoming history
// received the message in: the reaction would go nowhere.
func (s *server) sameChat(ctx context.Context, t target) error {
	if s.Inbox == nil {
		return nil
	}
	chat, _, found, err := s.Inbox.Received(ctx, t.ID)
	switch {
	case err != nil:
		return err
	case found && chat.JID() != t.Chat.JID():
		return bridge.Invalid(bridge.CodeChatMismatch, "the message was received in another chat than ?chat=")
	}
	return nil
}

// historyTarget is a received message the incoming history knows; notFound
// when it does not.
func (s *server) historyTarget(ctx context.Context, id string, q map[string]string, notFound error) (target, error) {
	if s.Inbox == nil {
		return target{}, notFound
	}
	chat, sender, ok, err := s.Inbox.Received(ctx, id)
	switch {
	case err != nil:
		return target{}, err
	case !ok:
		return target{}, notFound
	case q["sender"] != "":
		return target{}, bridge.Invalid(bridge.CodeUnexpectedSender, "?sender= goes with ?chat=; the bridge knows who sent this message")
	}
	return target{Chat: chat, ID: id, Sender: sender}, nil
}

// ownTarget checks that an action may act on m, a message of the log.
func ownTarget(m bridge.Message, q map[string]string) (target, error) {
	if c := q["chat"]; c != "" {
		chat, err := parseChat(c)
		if err != nil {
			return target{}, err
		}
		if chat != m.Recipient {
			return target{}, bridge.Invalid(bridge.CodeChatMismatch, "the message was sent to another chat than ?chat=")
		}
	}
	if q["sender"] != "" {
		return target{}, bridge.Invalid(bridge.CodeUnexpectedSender, "?sender= names who sent a received message; this one is the account's own")
	}
	return sendqueue.OwnTarget(m)
}

// receivedTarget is a received message named by its WhatsApp id and chat.
func receivedTarget(id string, q map[string]string) (target, error) {
	chat, err := parseChat(q["chat"])
	if err != nil {
		return target{}, err
	}
	t := target{Chat: chat, ID: id, Sender: chat}
	if chat.Kind != bridge.RecipientGroup {
		if q["sender"] != "" {
			return target{}, bridge.Invalid(bridge.CodeUnexpectedSender, "?sender= is only for a message received in a group")
		}
		return t, nil
	}
	if q["sender"] == "" {
		return target{}, bridge.Invalid(bridge.CodeMissingSender, "a message received in a group needs ?sender=, who sent it")
	}
	if t.Sender, err = parseChat(q["sender"]); err != nil || t.Sender.Kind == bridge.RecipientGroup {
		return target{}, bridge.Invalid(bridge.CodeInvalidSender, "sender must be a phone number or a LID")
	}
	return t, nil
}

type reactionBody struct {
	Emoji *string `json:"emoji"`
}

type editBody struct {
	Text *string `json:"text"`
}

// react is POST /api/messages/{id}/reaction {"emoji"}; "" removes it.
func (s *server) react(w http.ResponseWriter, r *http.Request) error {
	var body reactionBody
	if err := httpkit.DecodeJSON(w, r, &body); err != nil {
		return err
	}
	if body.Emoji == nil {
		return bridge.Invalid(bridge.CodeMissingEmoji, `the body needs "emoji"; "" removes the reaction`)
	}
	emoji, err := bridge.ParseEmoji(*body.Emoji)
	if err != nil {
		return err
	}
	return s.submitAction(w, r, bridge.TypeReaction, "", func(a *sendqueue.Action) { a.Emoji = emoji })
}

// editMessage is PATCH /api/messages/{id} {"text"}: an edit of a text the
// account sent, within WhatsApp's 15 minutes.
func (s *server) editMessage(w http.ResponseWriter, r *http.Request) error {
	var body editBody
	if err := httpkit.DecodeJSON(w, r, &body); err != nil {
		return err
	}
	text, err := editText(body.Text)
	if err != nil {
		return err
	}
	return s.submitAction(w, r, bridge.TypeEdit, text, nil)
}

// editText validates an edit's new text.
func editText(text *string) (string, error) {
	switch {
	case text == nil || strings.TrimSpace(*text) == "":
		return "", bridge.Invalid(bridge.CodeEmptyText, `the body needs a non-empty "text"`)
	case len(*text) > bridge.MaxTextBytes:
		return "", bridge.Invalid(bridge.CodeTextTooLong, "text is longer than %d bytes", bridge.MaxTextBytes)
	case !utf8.ValidString(*text):
		return "", bridge.Invalid(bridge.CodeInvalidText, "text is not valid UTF-8")
	}
	return *text, nil
}

// revokeMessage is DELETE /api/messages/{id}: a revoke for everyone of a
// message the account sent.
func (s *server) revokeMessage(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength > 0 {
		return bridge.Invalid(bridge.CodeUnexpectedBody, "DELETE takes no body")
	}
	return s.submitAction(w, r, bridge.TypeRevoke, "", nil)
}

// submitAction queues an action of type typ on the message the request
// names, like a send: durably, with the retry schedule and the
// Idempotency-Key; it answers 202 with the action's log entry.
func (s *server) submitAction(w http.ResponseWriter, r *http.Request, typ bridge.MessageType, text string, with func(*sendqueue.Action)) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	t, err := s.resolveTarget(r, typ)
	if err != nil {
		return err
	}
	if typ == bridge.TypeEdit {
		if err := s.editable(t); err != nil {
			return err
		}
	}
	if err := s.notRevoked(r.Context(), t, typ); err != nil {
		return err
	}
	return answer(w)(s.sending().Submit(r.Context(), t.Action(typ, text, key, with)))
}

// editable refuses an edit WhatsApp would not take: of a message the
// account did not send, that is not a text, or older than 15 minutes.
func (s *server) editable(t target) error {
	switch {
	case t.Own == nil:
		return errors.New("unreachable: edits resolve only the account's own messages")
	case t.Own.Type != bridge.TypeText:
		return bridge.Errorf(bridge.KindConflict, bridge.CodeNotEditable, "only a text can be edited; this is a %s", t.Own.Type)
	case s.Now().Sub(t.Own.CreatedAt) > bridge.EditWindow:
		return bridge.ErrEditWindowExpired
	}
	return nil
}
