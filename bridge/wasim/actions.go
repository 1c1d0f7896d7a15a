package wasim

import (
	"context"
	"sync"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// Reaction is the reaction a message carries: the id it reacts to, the
// emoji ("" removes it) and whether the key names the reactor's own
// message; ok is false for any other message.
func (m *Message) Reaction() (target types.MessageID, emoji string, fromMe, ok bool) {
	r := m.Content().GetReactionMessage()
	if r == nil {
		return "", "", false, false
	}
	return r.GetKey().GetID(), r.GetText(), r.GetKey().GetFromMe(), true
}

// Edit is the edit a message carries: the id it edits and the new text.
func (m *Message) Edit() (target types.MessageID, text string, ok bool) {
	p := m.Content().GetEditedMessage().GetMessage().GetProtocolMessage()
	if p == nil || p.GetType() != waE2E.ProtocolMessage_MESSAGE_EDIT {
		return "", "", false
	}
	edited := p.GetEditedMessage()
	text = edited.GetConversation()
	if text == "" {
		text = edited.GetExtendedTextMessage().GetText()
	}
	return p.GetKey().GetID(), text, true
}

// Revoke is the revoke for everyone a message carries: the id it deletes.
func (m *Message) Revoke() (target types.MessageID, ok bool) {
	p := m.Content().GetProtocolMessage()
	if p == nil || p.GetType() != waE2E.ProtocolMessage_REVOKE {
		return "", false
	}
	return p.GetKey().GetID(), true
}

// ChatState is a typing indicator a client sent into a chat.
type ChatState struct {
	From  types.JID // the client device
	Chat  types.JID // the user or group it was sent to
	State string    // "composing" or "paused"
	Media string    // "audio" while recording a voice note; "" otherwise
	At    time.Time // when the server received it
}

// records are what the simulator heard that needs no answer: the usync
// contact questions clients asked and the chat states they sent.
type records struct {
	mu         sync.Mutex
	questions  map[string]int // usync contact questions per number asked about
	queries    int            // usync contact queries, however many numbers each carried
	groupLists int            // <participating/> queries: the list of the user's groups
	groupReads int            // <query/> queries to one group: its info and members
	chatStates []ChatState
}

// recordContactQuestion counts a usync contact question about number.
func (s *Simulator) recordContactQuestion(number string) {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	if s.records.questions == nil {
		s.records.questions = map[string]int{}
	}
	s.records.questions[number]++
}

// recordContactQuery counts a usync contact query.
func (s *Simulator) recordContactQuery() {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	s.records.queries++
}

// ContactQueries is how many usync contact queries clients sent, each
// carrying one or more numbers: what WhatsApp counts against an account
// that checks numbers.
func (s *Simulator) ContactQueries() int {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	return s.records.queries
}

// GroupListQueries is how many times clients asked for the list of their
// groups (whatsmeow's GetJoinedGroups).
func (s *Simulator) GroupListQueries() int {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	return s.records.groupLists
}

// GroupInfoQueries is how many times clients asked for one group's info
// and members (whatsmeow's GetGroupInfo, and SendMessage before its first
// send to a group).
func (s *Simulator) GroupInfoQueries() int {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	return s.records.groupReads
}

// ContactQuestions is how many usync contact questions (whatsmeow's
// IsOnWhatsApp) asked about number.
func (s *Simulator) ContactQuestions(number string) int {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	return s.records.questions[normalizeNumber(number)]
}

// recordChatState keeps a client's <chatstate to><composing|paused [media]/></chatstate>.
func (s *Simulator) recordChatState(c *conn, n *waBinary.Node) {
	to, ok := n.Attrs["to"].(types.JID)
	children := n.GetChildren()
	if !ok || len(children) != 1 {
		return
	}
	media, _ := children[0].Attrs["media"].(string)
	cs := ChatState{From: c.device, Chat: to, State: children[0].Tag, Media: media, At: time.Now()}
	s.records.mu.Lock()
	s.records.chatStates = append(s.records.chatStates, cs)
	s.records.mu.Unlock()
	s.mu.Lock()
	if u := s.userByJIDLocked(to.ToNonAD()); u != nil {
		u.chatStates.add(cs) // the user's own view, for GET /v1/users/{n}/chatstates
	}
	s.notifyLocked()
	s.mu.Unlock()
}

// ChatStates lists the chat states clients sent, oldest first.
func (s *Simulator) ChatStates() []ChatState {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	return append([]ChatState(nil), s.records.chatStates...)
}

// WaitChatState waits for a chat state that match accepts.
func (s *Simulator) WaitChatState(ctx context.Context, match func(ChatState) bool) (ChatState, error) {
	var found ChatState
	err := s.waitFor(ctx, func() bool {
		for _, cs := range s.ChatStates() {
			if match(cs) {
				found = cs
				return true
			}
		}
		return false
	})
	return found, err
}
