package whatsapp

import (
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
)

// Session is the session port the rest of the bridge uses.
var _ bridge.Session = (*Session)(nil)

// handleEvent receives every whatsmeow event of client cli. It returns
// false to refuse the ack of the message or receipt it carries: WhatsApp
// then delivers it again (whatsmeow acks only after its handlers return,
// see SynchronousAck).
func (m *Session) handleEvent(cli *whatsmeow.Client, raw any) bool {
	if cli != m.client.Load() {
		return true // a replaced client's last events (after logout) say nothing now
	}
	switch e := raw.(type) {
	case *events.Message:
		return m.message(cli, e)
	case *events.UndecryptableMessage:
		return m.tooLarge(cli, e)
	case *events.Receipt:
		return m.receipt(e)
	case *events.Picture:
		m.profiles.forget(cli, e.JID)
		return m.groupEvent(raw)
	case *events.UserAbout:
		m.profiles.forget(cli, e.JID)
		return true
	case *events.GroupInfo, *events.JoinedGroup:
		return m.groupEvent(raw)
	case *events.PushNameSetting:
		m.pushNameChanged(e)
		return true
	case *events.CallOffer, *events.CallAccept, *events.CallReject, *events.CallTerminate:
		return m.callEvent(cli, raw)
	case *events.Blocklist:
		return m.blocklistEvent(cli, e)
	case *events.LabelEdit, *events.LabelAssociationChat, *events.LabelAssociationMessage:
		m.labelEvent(raw)
		return true
	case *events.NotifyAccountReachoutTimelock:
		m.reachoutAnnounced(e)
		return true
	case *events.Disconnected:
		m.linkDropped()
	}
	m.linkChanged(cli, raw)
	if _, outdated := raw.(*events.ClientOutdated); outdated {
		m.versionRefused()
	}
	return true
}

// pushNameChanged shows the account's new push name.
func (m *Session) pushNameChanged(e *events.PushNameSetting) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.status.Connected() && e.Action != nil {
		m.status.PushName = e.Action.GetName()
		m.notify()
	}
}

// linkChanged applies what raw means for the link, if anything.
func (m *Session) linkChanged(cli *whatsmeow.Client, raw any) {
	// StreamReplaced, TemporaryBan and ClientOutdated are permanent; whatsmeow
	// itself marks those disconnects as expected and does not reconnect (a
	// Disconnect from here would race its own teardown of the socket).
	switch ev := linkEvent(cli, raw).(type) {
	case nil:
	case paired:
		m.linked.Store(true)
		m.apply(ev)
	case loggedIn:
		if m.diskLow.Load() {
			go m.stopIfDiskLow()
			return
		}
		m.apply(ev)
		go m.loadBlocklist(cli)
		if m.loggedInBefore.Swap(true) {
			m.opts.Events.Reconnected()
		}
	case loggedOut:
		m.linked.Store(false)
		m.blocks.forget()
		m.apply(ev)
		// whatsmeow deleted the device; start over with empty credentials so
		// that a new link can begin.
		go m.reset(cli)
	default:
		m.apply(ev)
	}
}

// message passes an incoming message on; false (no ack) when it could not
// be stored, so that WhatsApp redelivers it.
func (m *Session) message(cli *whatsmeow.Client, e *events.Message) bool {
	if m.diskLow.Load() {
		// Decrypted before the disconnect took effect: whatsmeow's event
		// buffer keeps the plaintext, and WhatsApp delivers it again.
		return false
	}
	if e.Info.Chat == types.StatusBroadcastJID {
		return m.statusUpdate(cli, e)
	}
	if e.Info.Chat.Server == types.NewsletterServer {
		return m.channelPost(cli, e)
	}
	in, ok := incoming(m.bgCtx, cli, e)
	if ok && in.Type == bridge.IncomingPollVote {
		var err error
		if ok, err = m.readVote(cli, e, &in); err != nil {
			m.log.Error(err, "read a poll vote; WhatsApp will deliver it again", "poll", in.TargetID)
			return false
		}
	}
	if !ok {
		return true
	}
	m.acks.handed(&e.Info, m.opts.Events.Incoming(m.bgCtx, in))
	return true
}

// receipt passes delivered and read receipts of our own messages on; false
// (no ack) when they could not be applied.
func (m *Session) receipt(e *events.Receipt) bool {
	if e.IsFromMe {
		return true // our other devices reading; not the recipient
	}
	var status bridge.Status
	switch e.Type {
	case types.ReceiptTypeDelivered:
		status = bridge.StatusDelivered
	case types.ReceiptTypeRead:
		status = bridge.StatusRead
	default:
		return true
	}
	if m.opts.Messages == nil {
		return true
	}
	if err := m.opts.Messages.Receipt(m.bgCtx, bridge.Receipt{WhatsAppIDs: e.MessageIDs, Status: status}); err != nil {
		m.log.Error(err, "apply receipt; WhatsApp will deliver it again", "status", status)
		return false
	}
	return true
}
