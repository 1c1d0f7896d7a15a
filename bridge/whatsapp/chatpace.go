package whatsapp

import (
	"context"
	"sync"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge"
)

// DefaultPresenceInterval is the shortest time between two chat states
// sent to one chat (PRESENCE_INTERVAL): a person does not start and stop
// typing many times a second.
const DefaultPresenceInterval = 5 * time.Second

// maxReadMarks bounds the read marks remembered so that a message is
// marked read once; older ones may be marked again.
const maxReadMarks = 10_000

// chatPace keeps what the API sends into chats human: a chat state is sent
// only when it changes, at most one change per chat per interval (a change
// inside it waits for the interval's end, replaced by any later one), and
// a message is marked read once.
type chatPace struct {
	interval time.Duration
	now      func() time.Time

	mu    sync.Mutex
	chats map[types.JID]*chatState
	read  map[string]bool
	order []string // read marks, oldest first, to forget the oldest
}

// chatState is what was last sent into a chat and what waits for its turn.
type chatState struct {
	sent    bridge.ChatPresence
	sentAt  time.Time
	pending bridge.ChatPresence // "": none
	timer   *time.Timer
}

func newChatPace(interval time.Duration, now func() time.Time) *chatPace {
	if interval <= 0 {
		interval = DefaultPresenceInterval
	}
	return &chatPace{interval: interval, now: now, chats: map[types.JID]*chatState{}, read: map[string]bool{}}
}

// presence decides about p in chat: send it now (send is true), or later
// through later (which then runs once, with the latest state asked for), or
// never (a repeat of what the chat shows).
func (c *chatPace) presence(chat types.JID, p bridge.ChatPresence, later func(bridge.ChatPresence)) (send bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.chats[chat]
	if st == nil {
		st = &chatState{sent: bridge.PresencePaused} // a chat shows nothing: as paused
		c.chats[chat] = st
	}
	if st.timer == nil && st.sent == p {
		return false
	}
	now := c.now()
	if wait := st.sentAt.Add(c.interval).Sub(now); wait > 0 || st.timer != nil {
		st.pending = p
		if st.timer == nil {
			st.timer = time.AfterFunc(wait, func() { c.fire(chat, later) })
		}
		return false
	}
	st.sent, st.sentAt = p, now
	return true
}

// fire sends a chat's pending state at its turn, unless it is what the
// chat shows already.
func (c *chatPace) fire(chat types.JID, later func(bridge.ChatPresence)) {
	c.mu.Lock()
	st := c.chats[chat]
	p := st.pending
	st.timer, st.pending = nil, ""
	send := p != "" && p != st.sent
	if send {
		st.sent, st.sentAt = p, c.now()
	}
	c.mu.Unlock()
	if send {
		later(p)
	}
}

// markOnce reports whether message id in chat is marked read for the first
// time, and remembers it.
func (c *chatPace) markOnce(chat types.JID, id string) bool {
	key := chat.String() + "/" + id
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.read[key] {
		return false
	}
	if len(c.order) >= maxReadMarks {
		delete(c.read, c.order[0])
		c.order = c.order[1:]
	}
	c.read[key] = true
	c.order = append(c.order, key)
	return true
}

// unmark forgets a read mark that could not be sent, so that a retry
// sends it.
func (c *chatPace) unmark(chat types.JID, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.read, chat.String()+"/"+id) // its place in order goes with the oldest
}

// sendPresence sends p into chat on the current client, best effort: a
// state that waited for its turn has no caller to report to.
func (m *Session) sendPresence(ctx context.Context, jid types.JID, p bridge.ChatPresence) error {
	cli, err := m.readyClient()
	if err != nil {
		return err
	}
	state, media := types.ChatPresenceComposing, types.ChatPresenceMediaText
	switch p {
	case bridge.PresenceComposing:
	case bridge.PresenceRecording:
		media = types.ChatPresenceMediaAudio
	case bridge.PresencePaused:
		state = types.ChatPresencePaused
	}
	return cli.SendChatPresence(ctx, jid, state, media)
}
