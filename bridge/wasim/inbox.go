package wasim

import (
	"context"
	"sync"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// Message is a message a user's phone received from a client, decrypted.
type Message struct {
	ID        types.MessageID
	Chat      types.JID // the user (1:1) or group the message was sent to
	Sender    types.JID // the sending device (user:device@s.whatsapp.net)
	EncType   string    // "pkmsg" or "msg" for 1:1, "skmsg" for groups
	Timestamp time.Time // when the server received it
	Message   *waE2E.Message
	// Media is the decrypted attachment of an image, video, audio or
	// document message (or of the message inside a DeviceSentMessage); nil
	// when there is none.
	Media *Media
	// Err is why the phone could not decrypt or decode the message (then
	// Message is nil). A correct client never causes it.
	Err error
}

// Content is the message itself, unwrapped from the DeviceSentMessage a
// client sends to its own phone.
func (m *Message) Content() *waE2E.Message {
	if m.Message == nil {
		return nil
	}
	if dsm := m.Message.GetDeviceSentMessage(); dsm != nil {
		return dsm.GetMessage()
	}
	return m.Message
}

// Text is the text of the message, or the caption of an attachment.
func (m *Message) Text() string {
	c := m.Content()
	switch {
	case c.GetConversation() != "":
		return c.GetConversation()
	case c.GetExtendedTextMessage() != nil:
		return c.GetExtendedTextMessage().GetText()
	case c.GetImageMessage() != nil:
		return c.GetImageMessage().GetCaption()
	case c.GetVideoMessage() != nil:
		return c.GetVideoMessage().GetCaption()
	case c.GetDocumentMessage() != nil:
		return c.GetDocumentMessage().GetCaption()
	}
	return ""
}

// inbox is the append-only log of a user's received messages, with a read
// cursor for Next.
type inbox struct {
	mu      sync.Mutex
	msgs    []*Message
	cursor  int
	changed chan struct{} // closed and replaced on every append
}

func newInbox() *inbox {
	return &inbox{changed: make(chan struct{})}
}

func (ib *inbox) add(m *Message) {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	ib.msgs = append(ib.msgs, m)
	close(ib.changed)
	ib.changed = make(chan struct{})
}

func (ib *inbox) all() []*Message {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	return append([]*Message(nil), ib.msgs...)
}

func (ib *inbox) find(id types.MessageID) *Message {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	for _, m := range ib.msgs {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// wait returns the first message pick accepts, waiting for new ones until
// ctx ends. pick runs under the lock with the log and the cursor.
func (ib *inbox) wait(ctx context.Context, pick func(msgs []*Message, cursor *int) *Message) (*Message, error) {
	for {
		ib.mu.Lock()
		m := pick(ib.msgs, &ib.cursor)
		changed := ib.changed
		ib.mu.Unlock()
		if m != nil {
			return m, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Received lists every message the user's phone has received, oldest first.
func (u *User) Received() []*Message { return u.inbox.all() }

// Next returns the oldest message not yet returned by Next, waiting for one
// until ctx ends.
func (u *User) Next(ctx context.Context) (*Message, error) {
	return u.inbox.wait(ctx, func(msgs []*Message, cursor *int) *Message {
		if *cursor < len(msgs) {
			*cursor++
			return msgs[*cursor-1]
		}
		return nil
	})
}

// WaitMessage returns the received message with this ID (e.g. a
// whatsmeow SendResponse.ID), waiting for it until ctx ends.
func (u *User) WaitMessage(ctx context.Context, id types.MessageID) (*Message, error) {
	return u.inbox.wait(ctx, func(msgs []*Message, _ *int) *Message {
		for _, m := range msgs {
			if m.ID == id {
				return m
			}
		}
		return nil
	})
}
