package wasim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mau.fi/libsignal/keys/prekey"
	"go.mau.fi/libsignal/protocol"
	"google.golang.org/protobuf/proto"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// envelope is what the server knows about a message a client sent.
type envelope struct {
	id         types.MessageID
	chat       types.JID // the <message to>: a user or a group
	sender     types.JID // the sending device
	senderUser *User
	msgType    string // the <message type>: text, media, …
	t          time.Time
	biz        *waBinary.Node // the <biz> child: how an interactive message renders
}

// handleClientMessage routes a message a client sent:
//
//	<message id to type><participants><to jid><enc v type>…</enc></to>…</participants>
//	  [<device-identity/>] [<enc type="skmsg"/>]</message>
//
// Each <to> goes to one device: simulated phones decrypt it (and, in a
// group, the sender-key message), other clients get it relayed. Then the
// server acks with <ack class="message" id from t/>, which whatsmeow's
// SendMessage waits for, and the receiving phones send their automatic
// receipts.
func (s *Simulator) handleClientMessage(c *conn, n *waBinary.Node) {
	id, _ := n.Attrs["id"].(string)
	to, ok := n.Attrs["to"].(types.JID)
	if id == "" || !ok {
		_ = c.send(messageAck(id, to, 400))
		return
	}
	if s.takeSendFault(c.user, faultNack) {
		s.mu.Lock()
		code := c.user.faults.sendFailCode
		s.mu.Unlock()
		_ = c.send(messageAck(id, to, code))
		return
	}
	if to.Server == types.NewsletterServer {
		s.handleChannelPost(c, n, id, to)
		return
	}
	if s.reachoutLocked(c.user) || s.lacksTrustToken(c, n, to) {
		_ = c.send(messageAck(id, to, ackReachoutLocked))
		return
	}
	msgType, _ := n.Attrs["type"].(string)
	env := envelope{id: id, chat: to, sender: c.device, senderUser: c.user, msgType: msgType, t: time.Now()}
	if biz, ok := n.GetOptionalChildByTag("biz"); ok {
		if code := bizRefusal(biz); code != 0 {
			_ = c.send(messageAck(id, to, code))
			return
		}
		env.biz = &biz
	}

	var skmsg *waBinary.Node
	var direct []waBinary.Node // a peer message carries its <enc> directly
	for _, child := range n.GetChildren() {
		if child.Tag == "enc" {
			if child.Attrs["type"] == "skmsg" {
				skmsg = &child
			} else {
				direct = append(direct, child)
			}
		}
	}
	var readers []*User
	addReader := func(u *User) {
		if u != nil && u != c.user && !containsUser(readers, u) {
			readers = append(readers, u)
		}
	}
	participants := n.GetChildByTag("participants")
	for _, p := range participants.GetChildren() {
		dev, ok := p.Attrs["jid"].(types.JID)
		enc, hasEnc := p.GetOptionalChildByTag("enc")
		if p.Tag != "to" || !ok || !hasEnc {
			continue
		}
		addReader(s.routeToDevice(env, dev, enc, skmsg))
	}
	for _, enc := range direct {
		addReader(s.routeToDevice(env, to, enc, skmsg))
	}
	_ = c.send(messageAck(id, to, 0))
	for _, r := range readers {
		s.mu.Lock()
		mode := r.receipts
		s.mu.Unlock()
		switch mode {
		case ReceiptsDelivered:
			s.sendReceipt(r, env, types.ReceiptTypeDelivered)
		case ReceiptsRead:
			s.sendReceipt(r, env, types.ReceiptTypeDelivered)
			s.sendReceipt(r, env, types.ReceiptTypeRead)
		case ReceiptsNone:
		}
	}
}

// messageAck is the server's answer to a <message>; a non-zero code makes
// it an error (whatsmeow: ErrServerReturnedError).
func messageAck(id string, to types.JID, code int) waBinary.Node {
	attrs := waBinary.Attrs{"class": "message", "id": id, "t": time.Now().Unix()}
	if !to.IsEmpty() {
		attrs["from"] = to
	}
	if code != 0 {
		attrs["error"] = code
	}
	return waBinary.Node{Tag: "ack", Attrs: attrs}
}

func containsUser(list []*User, u *User) bool {
	for _, x := range list {
		if x == u {
			return true
		}
	}
	return false
}

// routeToDevice hands one device's <enc> to that device. It returns the
// user whose phone read the message, or nil.
func (s *Simulator) routeToDevice(env envelope, dev types.JID, enc waBinary.Node, skmsg *waBinary.Node) *User {
	s.mu.Lock()
	u := s.userByJIDLocked(dev.ToNonAD())
	var comp *companion
	if u != nil && dev.Device != 0 {
		comp = u.companions[dev.Device]
	}
	senderName := env.senderUser.name
	s.mu.Unlock()
	switch {
	case u == nil:
		s.log.Debugf("message %s for unknown device %s dropped", env.id, dev)
		return nil
	case dev.Device == 0:
		if s.phoneReceive(u, env, enc, skmsg) {
			return u
		}
		return nil
	case comp != nil:
		s.relay(u, comp, env, senderName, enc, skmsg)
	}
	return nil
}

// phoneReceive decrypts a message for a user's phone and files it in the
// user's inbox. In a group the device's <enc> carries the sender key
// (SenderKeyDistributionMessage) and the text is in the skmsg. It reports
// whether there was a message to read.
func (s *Simulator) phoneReceive(u *User, env envelope, enc waBinary.Node, skmsg *waBinary.Node) bool {
	ctx := s.ctx
	encType, _ := enc.Attrs["type"].(string)
	ciphertext, _ := enc.Content.([]byte)
	m := &Message{ID: env.id, Chat: env.chat, Sender: env.sender, EncType: encType, Timestamp: env.t, Biz: env.biz}
	defer func() {
		if m.Err != nil {
			s.log.Warnf("%s could not read %s from %s: %v", u.jid, env.id, env.sender, m.Err)
		}
	}()
	plaintext, err := u.phone.decrypt(ctx, env.sender.SignalAddress(), encType, ciphertext)
	if err != nil {
		m.Err = err
		u.inbox.add(m)
		return false
	}
	msg, err := unmarshalMessage(plaintext)
	if err != nil {
		m.Err = err
		u.inbox.add(m)
		return false
	}
	if sharesSenderKey(env.chat) {
		name := protocol.NewSenderKeyName(env.chat.String(), env.sender.SignalAddress())
		if skdm := msg.GetSenderKeyDistributionMessage(); skdm != nil {
			if err := u.phone.processSenderKey(ctx, name, skdm.GetAxolotlSenderKeyDistributionMessage()); err != nil {
				m.Err = fmt.Errorf("sender key: %w", err)
				u.inbox.add(m)
				return false
			}
		}
		if skmsg == nil {
			return false // only a sender key, nothing to read
		}
		groupCiphertext, _ := skmsg.Content.([]byte)
		plaintext, err = u.phone.decryptGroup(ctx, name, groupCiphertext)
		if err == nil {
			msg, err = unmarshalMessage(plaintext)
		}
		if err != nil {
			m.Err = err
			u.inbox.add(m)
			return false
		}
		m.EncType = "skmsg"
	}
	m.Message = msg
	m.Media = s.media.open(m.Content())
	u.inbox.add(m)
	return true
}

func unmarshalMessage(plaintext []byte) (*waE2E.Message, error) {
	var msg waE2E.Message
	if err := proto.Unmarshal(plaintext, &msg); err != nil {
		return nil, fmt.Errorf("unmarshal waE2E.Message: %w", err)
	}
	return &msg, nil
}

// relay passes a client's message on to another client (a companion of
// the recipient, or of the sender itself), as WhatsApp's server fans out:
//
//	<message from id t type notify [participant] [recipient]><enc/>[<enc type="skmsg"/>]</message>
func (s *Simulator) relay(u *User, comp *companion, env envelope, senderName string, enc waBinary.Node, skmsg *waBinary.Node) {
	attrs := waBinary.Attrs{"id": env.id, "t": env.t.Unix(), "type": orDefault(env.msgType, "text"), "notify": senderName}
	content := []waBinary.Node{enc}
	if sharesSenderKey(env.chat) {
		attrs["from"] = env.chat
		attrs["participant"] = env.sender
		if skmsg != nil {
			content = append(content, *skmsg)
		}
	} else {
		attrs["from"] = env.sender
		if u == env.senderUser {
			attrs["recipient"] = env.chat // the sender's own other device
		}
	}
	s.deliver(u, comp, waBinary.Node{Tag: "message", Attrs: attrs, Content: content})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// sendReceipt sends a receipt from reader for a message to every device of
// its sender:
//
//	<receipt from id t [type]/>, in groups <receipt from=group participant id t [type]/>
func (s *Simulator) sendReceipt(reader *User, env envelope, typ types.ReceiptType) {
	attrs := waBinary.Attrs{"id": env.id, "t": time.Now().Unix(), "from": reader.jid}
	if sharesSenderKey(env.chat) {
		attrs["from"] = env.chat
		attrs["participant"] = reader.jid
	}
	if typ != types.ReceiptTypeDelivered {
		attrs["type"] = string(typ)
	}
	for _, comp := range s.companionsOf(env.senderUser) {
		s.deliver(env.senderUser, comp, waBinary.Node{Tag: "receipt", Attrs: attrs})
	}
}

// SendReceipt sends a receipt (types.ReceiptTypeDelivered or
// types.ReceiptTypeRead) from the user for a message it received; the
// sender's clients get it as events.Receipt.
func (u *User) SendReceipt(id types.MessageID, typ types.ReceiptType) error {
	m, ok := u.inbox.find(func(m *Message) bool { return m.ID == id })
	if !ok {
		return fmt.Errorf("wasim: %s has not received message %s", u.jid, id)
	}
	s := u.sim
	s.mu.Lock()
	sender := s.userByJIDLocked(m.Sender.ToNonAD())
	s.mu.Unlock()
	if sender == nil {
		return fmt.Errorf("wasim: sender %s of %s is gone", m.Sender, id)
	}
	s.sendReceipt(u, envelope{id: id, chat: m.Chat, sender: m.Sender, senderUser: sender}, typ)
	return nil
}

// handleClientReceipt relays a client's receipt for a message from another
// client (<receipt id to [type] [participant]/>) to that client's devices.
// Receipts for messages from simulated phones need no answer.
func (s *Simulator) handleClientReceipt(c *conn, n *waBinary.Node) {
	to, ok := n.Attrs["to"].(types.JID)
	id, _ := n.Attrs["id"].(string)
	if !ok || id == "" {
		return
	}
	typ, _ := n.Attrs["type"].(string)
	c.acks.settle("message", receiptIDs(n, id)...) // answered, even by a retry
	if typ != string(types.ReceiptTypeRetry) {
		s.acked(c, receiptIDs(n, id)...) // the client has the message(s)
	}
	if typ == string(types.ReceiptTypeRetry) {
		s.log.Warnf("%s could not decrypt message %s from %s (retry receipt)", c.device, id, to)
		s.answerRetry(c, n, id, to)
		return
	}
	target := to
	attrs := waBinary.Attrs{"id": id, "t": time.Now().Unix(), "from": c.user.jid}
	if sharesSenderKey(to) {
		p, ok := n.Attrs["participant"].(types.JID)
		if !ok {
			return
		}
		target = p
		attrs["from"] = to
		attrs["participant"] = c.user.jid
	}
	kind := types.ReceiptType(typ)
	if kind == types.ReceiptTypeInactive { // a delivery by a client not marked online
		kind = types.ReceiptTypeDelivered
	}
	if kind != types.ReceiptTypeDelivered {
		attrs["type"] = string(kind)
	}
	s.mu.Lock()
	u := s.userByJIDLocked(target.ToNonAD())
	s.mu.Unlock()
	if u == nil || u == c.user {
		return
	}
	u.ticks.add(Tick{ID: id, From: c.device, Type: kind})
	for _, comp := range s.companionsOf(u) {
		s.deliver(u, comp, waBinary.Node{Tag: "receipt", Attrs: attrs})
	}
}

// receiptIDs lists the messages a receipt is for: its id and those of its
// <list><item id/></list>.
func receiptIDs(n *waBinary.Node, id string) []string {
	ids := []string{id}
	if list, ok := n.GetOptionalChildByTag("list"); ok {
		for _, item := range list.GetChildren() {
			if itemID, ok := item.Attrs["id"].(string); ok {
				ids = append(ids, itemID)
			}
		}
	}
	return ids
}

// ErrNoDevices is returned when a user sends to someone with no linked
// device to deliver to.
var ErrNoDevices = errors.New("wasim: recipient has no linked devices")

// Send sends msg from the user's phone to a user's linked devices (to is a
// user JID) or to a group's members (to is a group JID), end-to-end
// encrypted with the keys the devices uploaded: a "pkmsg" the first time,
// then "msg"; in groups with a sender key ("skmsg"). Devices that are
// offline get it when they log in. whatsmeow emits events.Message.
func (u *User) Send(ctx context.Context, to types.JID, msg *waE2E.Message) (types.MessageID, error) {
	if msg == nil {
		return "", errors.New("wasim: nil message")
	}
	plaintext, err := proto.Marshal(msg)
	if err != nil {
		return "", err
	}
	id := newMessageID()
	s := u.sim
	msgType, mediaType := classify(msg)
	if to.Server == types.GroupServer {
		return id, s.sendToGroup(ctx, u, to, id, msgType, mediaType, plaintext)
	}
	s.mu.Lock()
	target := s.userByJIDLocked(to.ToNonAD())
	name := u.name
	s.mu.Unlock()
	if target == nil {
		return "", fmt.Errorf("wasim: no user %s", to)
	}
	comps := s.companionsOf(target)
	if len(comps) == 0 {
		return "", ErrNoDevices
	}
	s.issueTrustToken(u, target)
	u.sent.add(id, sentMessage{plaintext: plaintext, msgType: msgType, mediaType: mediaType})
	for _, comp := range comps {
		encType, ciphertext, err := u.encryptFor(ctx, comp.jid, plaintext)
		if err != nil {
			return "", err
		}
		attrs := u.senderAttrs(false)
		attrs["id"], attrs["type"], attrs["t"], attrs["notify"] = id, msgType, time.Now().Unix(), name
		s.deliver(target, comp, waBinary.Node{Tag: "message", Attrs: attrs,
			Content: []waBinary.Node{encNode(encType, mediaType, ciphertext)},
		})
	}
	return id, nil
}

// SendText sends a text message (see Send).
func (u *User) SendText(ctx context.Context, to types.JID, text string) (types.MessageID, error) {
	return u.Send(ctx, to, &waE2E.Message{Conversation: proto.String(text)})
}

// encryptFor encrypts plaintext from the user's phone to a device, starting
// the session from the device's published keys if needed.
func (u *User) encryptFor(ctx context.Context, dev types.JID, plaintext []byte) (string, []byte, error) {
	fetch := func() (*prekey.Bundle, error) { return u.sim.directory.fetchBundle(dev) }
	encType, ciphertext, err := u.phone.encrypt(ctx, dev.SignalAddress(), fetch, plaintext)
	if err != nil {
		return "", nil, fmt.Errorf("wasim: encrypt for %s: %w", dev, err)
	}
	return encType, ciphertext, nil
}

func encNode(encType, mediaType string, ciphertext []byte) waBinary.Node {
	attrs := waBinary.Attrs{"v": "2", "type": encType}
	if mediaType != "" {
		attrs["mediatype"] = mediaType
	}
	return waBinary.Node{Tag: "enc", Attrs: attrs, Content: ciphertext}
}

// classify gives the <message type> and <enc mediatype> of a message.
func classify(msg *waE2E.Message) (msgType, mediaType string) {
	switch {
	case msg.GetImageMessage() != nil:
		return "media", "image"
	case msg.GetDocumentMessage() != nil:
		return "media", "document"
	case msg.GetVideoMessage() != nil:
		return "media", "video"
	case msg.GetAudioMessage() != nil:
		if msg.GetAudioMessage().GetPTT() {
			return "media", "ptt"
		}
		return "media", "audio"
	case msg.GetStickerMessage() != nil:
		return "media", "sticker"
	case msg.GetPollCreationMessage() != nil, msg.GetPollUpdateMessage() != nil:
		return "poll", ""
	}
	return "text", ""
}

// newMessageID makes an ID in the style of WhatsApp phones.
func newMessageID() types.MessageID {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return "3A" + strings.ToUpper(hex.EncodeToString(b))
}
