package wasim

import (
	"sync"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// sentKeep bounds how many of its own 1:1 messages a phone can send again.
const sentKeep = 4096

// sentMessage is what a phone needs to send one of its messages again.
type sentMessage struct {
	plaintext          []byte
	msgType, mediaType string
}

// sentLog keeps a phone's recent 1:1 messages by id, oldest forgotten first,
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
// message the phone no longer has (or a group message) is not sent again.
func (s *Simulator) answerRetry(c *conn, n *waBinary.Node, id types.MessageID, to types.JID) {
	s.mu.Lock()
	sender := s.userByJIDLocked(to.ToNonAD())
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
	encType, ciphertext, err := sender.encryptFor(s.ctx, c.device, orig.plaintext)
	if err != nil {
		s.log.Warnf("retry of %s for %s: %v", id, c.device, err)
		return
	}
	s.log.Infof("%s sends message %s again to %s (retry %d)", sender.jid, id, c.device, count)
	enc := encNode(encType, orig.mediaType, ciphertext)
	enc.Attrs["count"] = count
	attrs := sender.senderAttrs(false)
	attrs["id"], attrs["type"], attrs["t"], attrs["notify"] = id, orig.msgType, time.Now().Unix(), sender.name
	s.deliver(c.user, comp, waBinary.Node{Tag: "message", Attrs: attrs, Content: []waBinary.Node{enc}})
}
