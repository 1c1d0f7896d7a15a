package wasim

import (
	"context"
	"sync"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
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
	// Biz is the <biz> node the message's stanza carried (nil: none),
	// which decides whether a phone renders an interactive message.
	Biz *waBinary.Node
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

// journal is an append-only log that readers can wait on: a phone's
// received messages, or the ticks its sent messages got.
type journal[T any] struct {
	mu      sync.Mutex
	items   []T
	cursor  int           // Next's read position
	changed chan struct{} // closed and replaced on every append
}

func newJournal[T any]() *journal[T] {
	return &journal[T]{changed: make(chan struct{})}
}

func (j *journal[T]) add(v T) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.items = append(j.items, v)
	close(j.changed)
	j.changed = make(chan struct{})
}

func (j *journal[T]) all() []T {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]T(nil), j.items...)
}

// find returns the first item match accepts.
func (j *journal[T]) find(match func(T) bool) (T, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, v := range j.items {
		if match(v) {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// wait returns the first item pick accepts, waiting for new ones until ctx
// ends. pick runs under the lock with the log and the cursor.
func (j *journal[T]) wait(ctx context.Context, pick func(items []T, cursor *int) (T, bool)) (T, error) {
	for {
		j.mu.Lock()
		v, ok := pick(j.items, &j.cursor)
		changed := j.changed
		j.mu.Unlock()
		if ok {
			return v, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}
}

// waitFor returns the first item match accepts, waiting for it until ctx
// ends.
func (j *journal[T]) waitFor(ctx context.Context, match func(T) bool) (T, error) {
	return j.wait(ctx, func(items []T, _ *int) (T, bool) {
		for _, v := range items {
			if match(v) {
				return v, true
			}
		}
		var zero T
		return zero, false
	})
}

// Received lists every message the user's phone has received, oldest first.
func (u *User) Received() []*Message { return u.inbox.all() }

// Next returns the oldest message not yet returned by Next, waiting for one
// until ctx ends.
func (u *User) Next(ctx context.Context) (*Message, error) {
	return u.inbox.wait(ctx, func(msgs []*Message, cursor *int) (*Message, bool) {
		if *cursor < len(msgs) {
			*cursor++
			return msgs[*cursor-1], true
		}
		return nil, false
	})
}

// WaitMessage returns the received message with this ID (e.g. a
// whatsmeow SendResponse.ID), waiting for it until ctx ends.
func (u *User) WaitMessage(ctx context.Context, id types.MessageID) (*Message, error) {
	return u.inbox.waitFor(ctx, func(m *Message) bool { return m.ID == id })
}

// Tick is a receipt a client sent for a message this user sent: what the
// sender's phone shows as grey or blue ticks.
type Tick struct {
	ID   types.MessageID
	From types.JID         // the client device that sent the receipt
	Type types.ReceiptType // types.ReceiptTypeDelivered (""), types.ReceiptTypeRead, …
}

// Ticks lists the receipts clients sent for this user's messages, oldest
// first.
func (u *User) Ticks() []Tick { return u.ticks.all() }

// WaitTick waits until a client has sent a receipt of type typ for message
// id of this user. A test that ends a client right after it received a
// message waits for its delivery receipt first, so that it does not close
// the client while whatsmeow is still sending it.
func (u *User) WaitTick(ctx context.Context, id types.MessageID, typ types.ReceiptType) (Tick, error) {
	return u.ticks.waitFor(ctx, func(t Tick) bool { return t.ID == id && t.Type == typ })
}
