package mcp

import (
	"context"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
	"github.com/msgbridge/msgbridge/bridge/spool"
)

// maxOwnKey bounds an idempotency_key: the queue's bound less the door's
// prefix.
const maxOwnKey = 200

// sendMessage queues one message through the send use case, under the
// call's idempotency key.
func (d *door) sendMessage(ctx context.Context, req *sdk.CallToolRequest, in sendMessageIn) (*sdk.CallToolResult, sendMessageOut, error) {
	out, err := d.send(ctx, req, in)
	if err != nil {
		return nil, sendMessageOut{}, d.toolError(err)
	}
	return nil, out, nil
}

func (d *door) send(ctx context.Context, req *sdk.CallToolRequest, in sendMessageIn) (sendMessageOut, error) {
	h := headerOf(req)
	chat, err := d.chatOf(h, in.Chat)
	if err != nil {
		return sendMessageOut{}, err
	}
	key, err := d.keyOf(req, in.IdempotencyKey)
	if err != nil {
		return sendMessageOut{}, err
	}
	var outcome sendqueue.Outcome
	switch {
	case in.Reaction != nil:
		if in.Text != "" || in.File != nil || in.ReplyTo != "" {
			return sendMessageOut{}, bridge.Invalid(bridge.CodeInvalidAction, "a reaction goes alone: leave out text, file and reply_to")
		}
		var r sendqueue.Request
		if r, err = d.reactionRequest(ctx, chat, *in.Reaction); err != nil {
			return sendMessageOut{}, err
		}
		r.IdempotencyKey = key
		outcome, err = d.cfg.Sending.Submit(ctx, r)
	default:
		var draft sendqueue.Draft
		if draft, err = d.draftOf(ctx, h, chat, in); err != nil {
			return sendMessageOut{}, err
		}
		draft.IdempotencyKey = key
		outcome, err = d.cfg.Sending.Send(ctx, draft)
	}
	if err != nil {
		return sendMessageOut{}, err
	}
	return answerOf(outcome), nil
}

// keyOf is the call's idempotency key (see callKey).
func (d *door) keyOf(req *sdk.CallToolRequest, own string) (string, error) {
	if own != "" {
		if len(own) > maxOwnKey {
			return "", bridge.Invalid(bridge.CodeInvalidIdempotencyKey, "idempotency_key is at most %d characters", maxOwnKey)
		}
		if _, err := sendqueue.ParseIdempotencyKey(own); err != nil {
			return "", err
		}
	}
	session := ""
	if req != nil && req.Session != nil {
		session = req.Session.ID()
	}
	return callKey(own, session, headerOf(req).Get(requestIDHeader)), nil
}

// answerOf is the tool's answer to what the send use case did: the same
// for a retry, which gets the first call's outcome.
func answerOf(o sendqueue.Outcome) sendMessageOut {
	out := sendMessageOut{Status: "queued", Messages: make([]sentItem, len(o.Messages))}
	for i, m := range o.Messages {
		out.Messages[i] = sentItem{ID: m.ID, WhatsAppID: m.WhatsAppID, Status: string(m.Status)}
	}
	return out
}

// draftOf reads a text or file send into the one validation's terms.
func (d *door) draftOf(ctx context.Context, h http.Header, chat bridge.Recipient, in sendMessageIn) (sendqueue.Draft, error) {
	it := sendqueue.ItemDraft{Type: string(bridge.TypeText), Text: in.Text}
	if in.File != nil {
		f, err := d.fileOf(ctx, h, *in.File)
		if err != nil {
			return sendqueue.Draft{}, err
		}
		it.File, it.Type = f, string(mediaType(f.MimeType))
	}
	draft := sendqueue.Draft{To: chat.String(), Items: []sendqueue.ItemDraft{it}}
	if in.ReplyTo != "" {
		draft.ReplyTo = &in.ReplyTo
	}
	return draft, nil
}

// mediaType is the message type that carries a file of mimeType.
func mediaType(mimeType string) bridge.MessageType {
	switch {
	case spool.IsImage(mimeType):
		return bridge.TypeImage
	case spool.IsVideo(mimeType):
		return bridge.TypeVideo
	case spool.IsAudio(mimeType):
		return bridge.TypeAudio
	}
	return bridge.TypeDocument
}

// fileOf is a send's own copy of the file a file argument names.
func (d *door) fileOf(ctx context.Context, h http.Header, in fileInput) (*sendqueue.SpooledFile, error) {
	if (in.UploadID == "") == (in.ResourceURI == "") {
		return nil, bridge.Invalid(bridge.PartFile.MissingCode(), "file needs one of upload_id and resource_uri")
	}
	var (
		f   *sendqueue.SpooledFile
		err error
	)
	if in.UploadID != "" {
		f, err = d.cfg.Files.Use(ctx, in.UploadID)
	} else {
		f, err = d.forward(ctx, h, in.ResourceURI)
	}
	if err != nil {
		return nil, err
	}
	if name := strings.TrimSpace(in.FileName); name != "" {
		f.Name = name
	}
	return f, nil
}

// forward copies a received attachment into the spool, to send it on.
func (d *door) forward(ctx context.Context, h http.Header, uri string) (*sendqueue.SpooledFile, error) {
	id, err := parseMediaURI(uri)
	if err != nil {
		return nil, err
	}
	if err := d.mediaAllowed(ctx, h, id); err != nil {
		return nil, err
	}
	m, err := d.cfg.Media.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	defer func() { _ = m.Content.Close() }()
	f, err := d.cfg.Files.Spool(m.Content, m.FileName)
	if err != nil {
		f.Discard()
		return nil, err
	}
	return f, nil
}

// reactionRequest is a reaction to a message of chat: the account's own
// (the message log) or one received there (the incoming history).
func (d *door) reactionRequest(ctx context.Context, chat bridge.Recipient, r reaction) (sendqueue.Request, error) {
	emoji, err := bridge.ParseEmoji(r.Emoji)
	if err != nil {
		return sendqueue.Request{}, err
	}
	id, err := bridge.ParseReplyTo(r.MessageID)
	if err != nil {
		return sendqueue.Request{}, err
	}
	action := &sendqueue.Action{TargetID: id, Emoji: emoji}
	own, err := d.cfg.Own.FindMessage(ctx, id)
	switch {
	case err == nil:
		if own.Recipient != chat {
			return sendqueue.Request{}, bridge.Invalid(bridge.CodeChatMismatch, "the message was sent to another chat")
		}
		action.TargetID = own.WhatsAppID
	case bridge.ErrorKind(err) != bridge.KindNotFound:
		return sendqueue.Request{}, err
	default:
		sender, found, err := d.cfg.History.ReceivedIn(ctx, chat, id)
		if err != nil {
			return sendqueue.Request{}, err
		}
		if !found {
			return sendqueue.Request{}, bridge.Errorf(bridge.KindNotFound, bridge.CodeMessageNotFound,
				"no message with this id in this chat")
		}
		if action.TargetSender, err = bridge.ParseRecipient(sender); err != nil {
			return sendqueue.Request{}, err
		}
	}
	return sendqueue.Request{Recipient: chat, Items: []sendqueue.Item{{Type: bridge.TypeReaction, Action: action}}}, nil
}

// markRead sends a read receipt up to a received message and records the
// read mark the unread counts start from.
func (d *door) markRead(ctx context.Context, req *sdk.CallToolRequest, in markReadIn) (*sdk.CallToolResult, markReadOut, error) {
	chat, err := d.chatOf(headerOf(req), in.Chat)
	if err != nil {
		return nil, markReadOut{}, d.toolError(err)
	}
	if err := d.read(ctx, chat, in.MessageID); err != nil {
		return nil, markReadOut{}, d.toolError(err)
	}
	return nil, markReadOut{Chat: chat.String(), Read: true}, nil
}

func (d *door) read(ctx context.Context, chat bridge.Recipient, messageID string) error {
	id, err := bridge.ParseReplyTo(messageID)
	if err != nil {
		return err
	}
	sender, found, err := d.cfg.History.ReceivedIn(ctx, chat, id)
	switch {
	case err != nil:
		return err
	case !found:
		return bridge.Errorf(bridge.KindNotFound, bridge.CodeMessageNotFound, "no received message with this id in this chat")
	}
	var from bridge.Recipient
	if chat.Kind == bridge.RecipientGroup {
		if from, err = bridge.ParseRecipient(sender); err != nil {
			return err
		}
	}
	if err := d.cfg.Receipts.MarkRead(ctx, chat, from, id); err != nil {
		return err
	}
	return d.cfg.History.MarkRead(ctx, chat)
}
