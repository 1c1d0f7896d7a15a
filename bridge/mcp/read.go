package mcp

import (
	"context"
	"fmt"
	"net/http"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/history"
)

// Page sizes of the read tools.
const (
	defaultLimit = 20
	maxLimit     = 100
)

// limitOf is a tool's limit argument: absent is the default.
func limitOf(n int) (int, error) {
	switch {
	case n == 0:
		return defaultLimit, nil
	case n < 1 || n > maxLimit:
		return 0, bridge.Invalid(bridge.CodeInvalidLimit, "limit must be from 1 to %d", maxLimit)
	}
	return n, nil
}

// headerOf is the HTTP header of a tool call's request (empty when the
// transport has none).
func headerOf(req *sdk.CallToolRequest) http.Header {
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		return req.Extra.Header
	}
	return http.Header{}
}

// chatOf parses a chat argument and checks that the caller may touch it.
func (d *door) chatOf(h http.Header, s string) (bridge.Recipient, error) {
	r, err := bridge.ParseRecipient(s)
	if err != nil || r.Kind == bridge.RecipientStatus {
		return bridge.Recipient{}, bridge.Invalid(bridge.CodeInvalidChat,
			"chat must be a phone number with country code, <id>@g.us or <digits>@lid")
	}
	if !d.cfg.Allowed(h, r) {
		return bridge.Recipient{}, errChatNotAllowed
	}
	return r, nil
}

var errChatNotAllowed = bridge.Errorf(bridge.KindForbidden, bridge.CodeChatNotAllowed, "this key may not read or write this chat")

// allowedChat reports whether h's caller may see the chat a stored
// message names.
func (d *door) allowedChat(h http.Header, chat string) bool {
	r, err := bridge.ParseRecipient(chat)
	return err == nil && d.cfg.Allowed(h, r)
}

func (d *door) listChats(ctx context.Context, req *sdk.CallToolRequest, in listChatsIn) (*sdk.CallToolResult, listChatsOut, error) {
	limit, err := limitOf(in.Limit)
	if err != nil {
		return nil, listChatsOut{}, d.toolError(err)
	}
	chats, err := d.cfg.History.Chats(ctx, limit)
	if err != nil {
		return nil, listChatsOut{}, d.toolError(err)
	}
	out := listChatsOut{Chats: []chat{}}
	h := headerOf(req)
	for _, c := range chats {
		if !d.allowedChat(h, c.Chat) {
			continue
		}
		item := chat{Chat: c.Chat, Name: c.Name, Unread: c.Unread}
		if c.Last.ID != "" {
			last := messageOf(c.Last)
			item.Last = &last
		}
		out.Chats = append(out.Chats, item)
	}
	return nil, out, nil
}

func (d *door) readMessages(ctx context.Context, req *sdk.CallToolRequest, in readMessagesIn) (*sdk.CallToolResult, messagesOut, error) {
	chat, err := d.chatOf(headerOf(req), in.Chat)
	if err != nil {
		return nil, messagesOut{}, d.toolError(err)
	}
	limit, err := limitOf(in.Limit)
	if err != nil {
		return nil, messagesOut{}, d.toolError(err)
	}
	msgs, next, err := d.cfg.History.Messages(ctx, chat, limit, in.Cursor)
	if err != nil {
		return nil, messagesOut{}, d.toolError(err)
	}
	return nil, messagesOut{Messages: messagesOf(msgs), NextCursor: next}, nil
}

func (d *door) searchMessages(ctx context.Context, req *sdk.CallToolRequest, in searchMessagesIn) (*sdk.CallToolResult, messagesOut, error) {
	h := headerOf(req)
	var chat bridge.Recipient
	if in.Chat != "" {
		var err error
		if chat, err = d.chatOf(h, in.Chat); err != nil {
			return nil, messagesOut{}, d.toolError(err)
		}
	}
	limit, err := limitOf(in.Limit)
	if err != nil {
		return nil, messagesOut{}, d.toolError(err)
	}
	msgs, err := d.cfg.History.Search(ctx, in.Query, chat, limit)
	if err != nil {
		return nil, messagesOut{}, d.toolError(err)
	}
	allowed := msgs[:0]
	for _, m := range msgs {
		if d.allowedChat(h, m.Chat) {
			allowed = append(allowed, m)
		}
	}
	return nil, messagesOut{Messages: messagesOf(allowed)}, nil
}

func messagesOf(msgs []history.Message) []message {
	out := make([]message, len(msgs))
	for i, m := range msgs {
		out[i] = messageOf(m)
	}
	return out
}

// messageOf is m as the tools show it: a contact's marked third-party and
// untrusted.
func messageOf(m history.Message) message {
	out := message{Origin: "account", Direction: string(m.Direction), ID: m.ID, Chat: m.Chat,
		Time: m.At.UTC().Format(time.RFC3339Nano), Type: m.Type, Text: m.Text, Status: m.Status}
	if m.Direction == history.In {
		out.Origin, out.Untrusted = "third_party", true
		out.Sender, out.SenderName, out.ReplyTo = m.Sender, m.SenderName, m.Quoted
	}
	if m.MediaID != "" {
		out.Media = &media{URI: mediaURI(m.MediaID), MimeType: m.MimeType}
	}
	return out
}

// toolError is err as the assistant reads it: the bridge's error code
// first, then what to do. An internal error's cause is logged, not told.
func (d *door) toolError(err error) error {
	e := bridge.ErrorOf(err)
	if e.Kind == bridge.KindInternal {
		d.cfg.Log.Error(err, "mcp tool call failed")
	}
	return fmt.Errorf("%s: %s", e.Code, e.Message)
}
