package wasim

import (
	"context"
	"sync"
	"time"

	"go.mau.fi/libsignal/protocol"
	"google.golang.org/protobuf/proto"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// sentKeep bounds how many of its own messages a phone can send again.
const sentKeep = 4096

// sentMessage is what a phone needs to send one of its messages again.
type sentMessage struct {
	plaintext          []byte
	msgType, mediaType string
	group              types.JID // the group it was sent to; empty for a 1:1 message
}

// sentLog keeps a phone's recent messages by id, oldest forgotten first,
// as a phone keeps its chats: a device that could not decrypt one asks for
// it again with a retry receipt.
type sentLog struct {
	mu    sync.Mutex
	byID  map[types.MessageID]sentMessage
	order []types.MessageID
}

func (l *sentLog) add(id types.MessageID, m sentMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID == nil {
		l.byID = map[types.MessageID]sentMessage{}
	}
	if _, ok := l.byID[id]; !ok {
		l.order = append(l.order, id)
	}
	l.byID[id] = m
	if len(l.order) > sentKeep {
		delete(l.byID, l.order[0])
		l.order = l.order[1:]
	}
}

func (l *sentLog) find(id types.MessageID) (sentMessage, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, ok := l.byID[id]
	return m, ok
}

// answerRetry does what a phone does with a retry receipt,
//
//	<receipt id to type="retry"><retry count id t v/><registration/>[<keys/>]</receipt>:
//
// the device c could not decrypt message id (whatsmeow sends one when its
// decrypt fails, for instance on a store error, and acks the message all the
// same), so the phone that sent it encrypts it again for that device and
// sends it with the same id and <enc count>. The phone's session moved on
// past the lost message; the device's did not, and decrypts the new one. A
// group message's receipt comes from the group, naming the sender as its
// participant; the phone sends the message again to that device alone, 1:1
// encrypted, with its sender key again (as whatsmeow answers a retry of its
// own group message), so that the device can read the sender's next skmsg
// too. A message the phone no longer has is not sent again.
func (s *Simulator) answerRetry(c *conn, n *waBinary.Node, id types.MessageID, to types.JID) {
	from := to
	if sharesSenderKey(to) {
		from, _ = n.Attrs["participant"].(types.JID)
	}
	s.mu.Lock()
	sender := s.userByJIDLocked(from.ToNonAD())
	comp := c.user.companions[c.device.Device]
	s.mu.Unlock()
	if sender == nil || comp == nil {
		s.log.Warnf("retry receipt from %s for %s of unknown sender %s", c.device, id, to)
		return
	}
	orig, ok := sender.sent.find(id)
	if !ok {
		s.log.Warnf("%s asked again for message %s, which %s does not have", c.device, id, to)
		return
	}
	count := 1
	if r, ok := n.GetOptionalChildByTag("retry"); ok {
		count = max(r.AttrGetter().OptionalInt("count"), 1)
	}
	plaintext, err := sender.withSenderKey(s.ctx, orig)
	if err != nil {
		s.log.Warnf("retry of %s for %s: %v", id, c.device, err)
		return
	}
	encType, ciphertext, err := sender.encryptFor(s.ctx, c.device, plaintext)
	if err != nil {
		s.log.Warnf("retry of %s for %s: %v", id, c.device, err)
		return
	}
	s.log.Infof("%s sends message %s again to %s (retry %d)", sender.jid, id, c.device, count)
	enc := encNode(encType, orig.mediaType, ciphertext)
	enc.Attrs["count"] = count
	attrs := sender.senderAttrs(!orig.group.IsEmpty())
	attrs["id"], attrs["type"], attrs["t"], attrs["notify"] = id, orig.msgType, time.Now().Unix(), sender.name
	if !orig.group.IsEmpty() {
		attrs["from"] = orig.group
	}
	s.deliver(c.user, comp, waBinary.Node{Tag: "message", Attrs: attrs, Content: []waBinary.Node{enc}})
}

// withSenderKey is a sent message's plaintext as a retry carries it: a
// group message with the sender's current sender key in it, a 1:1 message
// as it was.
func (u *User) withSenderKey(ctx context.Context, m sentMessage) ([]byte, error) {
	if m.group.IsEmpty() {
		return m.plaintext, nil
	}
	var msg waE2E.Message
	if err := proto.Unmarshal(m.plaintext, &msg); err != nil {
		return nil, err
	}
	skdm, err := u.phone.senderKey(ctx, protocol.NewSenderKeyName(m.group.String(), u.jid.SignalAddress()))
	if err != nil {
		return nil, err
	}
	msg.SenderKeyDistributionMessage = &waE2E.SenderKeyDistributionMessage{
		GroupID:                             proto.String(m.group.String()),
		AxolotlSenderKeyDistributionMessage: skdm,
	}
	return proto.Marshal(&msg)
}
