package sendqueue

import (
	"context"
	"strings"

	"github.com/msgbridge/msgbridge/bridge"
)

// Target is the message an action (a reaction, an edit, a revoke) acts on.
type Target struct {
	Chat bridge.Recipient
	// ID is its WhatsApp id.
	ID string
	// Sender is who sent it, when it was received.
	Sender bridge.Recipient
	// Own is its entry in the log, when the account sent it.
	Own *bridge.Message
}

// MessageFinder finds a message of the log by its log id or its WhatsApp
// id (*Log, *Queue).
type MessageFinder interface {
	FindMessage(ctx context.Context, id string) (bridge.Message, error)
}

// ReceivedFinder finds a received message's chat and sender in the
// incoming history (*inbox.Inbox).
type ReceivedFinder interface {
	Received(ctx context.Context, id string) (chat, sender bridge.Recipient, found bool, err error)
}

// maxMessageID bounds a message id: log ids are UUIDs, WhatsApp ids are at
// most a few dozen hex digits.
const maxMessageID = 128

// ParseMessageID accepts a log id or a WhatsApp id: letters, digits and
// dashes.
func ParseMessageID(id string) (string, error) {
	if id == "" || len(id) > maxMessageID || strings.IndexFunc(id, func(r rune) bool {
		return (r < '0' || r > '9') && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && r != '-'
	}) >= 0 {
		return "", bridge.Invalid(bridge.CodeInvalidMessageID, "a message id is 1-%d letters, digits and dashes", maxMessageID)
	}
	return id, nil
}

// OwnTarget checks that an action may act on m, a message of the log.
func OwnTarget(m bridge.Message) (Target, error) {
	switch {
	case m.Type.IsAction():
		return Target{}, bridge.Errorf(bridge.KindConflict, bridge.CodeNotActionable, "a %s cannot be acted on", m.Type)
	case m.Status == bridge.StatusFailed:
		return Target{}, bridge.Errorf(bridge.KindConflict, bridge.CodeTargetFailed, "the message failed; it never reached WhatsApp")
	}
	return Target{Chat: m.Recipient, ID: m.WhatsAppID, Own: &m}, nil
}

// Targets finds the message an action names by its id alone: the log
// holds what the account sent; a received message is found in the
// incoming history, and only a reaction may act on one. Anything else is
// message_not_found.
type Targets struct {
	Log MessageFinder
	// History is the incoming history; nil: received messages are not
	// found.
	History ReceivedFinder
}

// Find finds the target of an action of type typ named by id.
func (t Targets) Find(ctx context.Context, id string, typ bridge.MessageType) (Target, error) {
	id, err := ParseMessageID(id)
	if err != nil {
		return Target{}, err
	}
	m, err := t.Log.FindMessage(ctx, id)
	if err == nil {
		return OwnTarget(m)
	}
	if bridge.ErrorKind(err) != bridge.KindNotFound || typ != bridge.TypeReaction || t.History == nil {
		return Target{}, err
	}
	notFound := err
	chat, sender, found, err := t.History.Received(ctx, id)
	switch {
	case err != nil:
		return Target{}, err
	case !found:
		return Target{}, notFound
	}
	return Target{Chat: chat, ID: id, Sender: sender}, nil
}

// Action is the request of an action of type typ on t: text is an edit's
// new text, with sets what else the action carries (a reaction's emoji).
func (t Target) Action(typ bridge.MessageType, text, key string, with func(*Action)) Request {
	action := &Action{TargetID: t.ID}
	if t.Own == nil {
		action.TargetSender = t.Sender
	}
	if with != nil {
		with(action)
	}
	return Request{Recipient: t.Chat, IdempotencyKey: key, Items: []Item{{Type: typ, Text: text, Action: action}}}
}
