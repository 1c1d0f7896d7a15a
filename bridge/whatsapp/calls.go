package whatsapp

import (
	"context"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
)

// CallEvents hears the calls WhatsApp reports. Both run before the call
// node is acked: an error refuses the ack, and WhatsApp delivers it again.
type CallEvents interface {
	// CallOffered: a call rings (call.offer); Rejected says whether the
	// bridge rejects it, and the wiring sends REJECT_CALLS_REPLY then.
	CallOffered(ctx context.Context, c bridge.Call) error
	// CallEnded: a call ended (call.ended), with how.
	CallEnded(ctx context.Context, c bridge.Call) error
}

// callsKept bounds the calls remembered until they end; a call that never
// ends (its terminate lost) is forgotten after callMemory.
const (
	callsKept  = 256
	callMemory = time.Hour
)

// ringing are the calls offered and not yet ended, by call id, so that an
// end says how: missed, rejected or answered on another device.
type ringing struct {
	mu    sync.Mutex
	calls map[string]*bridge.Call
}

func (r *ringing) keep(c bridge.Call, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]*bridge.Call{}
	}
	for id, old := range r.calls {
		if now.Sub(old.At) > callMemory || len(r.calls) >= callsKept {
			delete(r.calls, id)
		}
	}
	r.calls[c.ID] = &c
}

// answered marks a call as accepted on another device of the account.
func (r *ringing) answered(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.calls[id]; c != nil {
		c.Ended = bridge.CallAcceptedElsewhere
	}
}

// end forgets a call and returns it with how it ended: as marked, else
// rejected when the bridge or a device rejected it, else how.
func (r *ringing) end(id, how string) (bridge.Call, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls[id]
	if c == nil {
		return bridge.Call{}, false
	}
	delete(r.calls, id)
	switch {
	case c.Ended != "":
	case c.Rejected != "":
		c.Ended = bridge.CallRejected
	default:
		c.Ended = how
	}
	return *c, true
}

// callEvent handles whatsmeow's call events; false refuses the ack.
func (m *Session) callEvent(cli *whatsmeow.Client, raw any) bool {
	if m.opts.Calls == nil {
		return true
	}
	var err error
	switch e := raw.(type) {
	case *events.CallOffer:
		err = m.callOffered(cli, e)
	case *events.CallAccept:
		m.calls.answered(e.CallID)
	case *events.CallReject:
		err = m.callEnded(e.CallID, bridge.CallRejected)
	case *events.CallTerminate:
		err = m.callEnded(e.CallID, bridge.CallMissed)
	}
	if err != nil {
		m.log.Error(err, "store call event; WhatsApp will deliver it again")
		return false
	}
	return true
}

func (m *Session) callOffered(cli *whatsmeow.Client, e *events.CallOffer) error {
	caller, err := senderOf(m.bgCtx, cli, e.CallCreator, e.CallCreatorAlt)
	if err != nil {
		return nil //nolint:nilerr // a caller with no address we can name is not reported
	}
	c := bridge.Call{ID: e.CallID, From: caller.From, FromLID: caller.FromLID, FromPhone: caller.FromPhone,
		Video: isVideo(e), At: e.Timestamp}
	if !e.GroupJID.IsEmpty() {
		c.Group = e.GroupJID.String()
	}
	c.Rejected = m.rejects(cli, e.CallCreator, e.CallCreatorAlt)
	if err := m.opts.Calls.CallOffered(m.bgCtx, c); err != nil {
		return err
	}
	m.calls.keep(c, m.opts.Now())
	if c.Rejected == "" {
		return nil
	}
	if err := cli.RejectCall(m.bgCtx, e.CallCreator, e.CallID); err != nil {
		// The caller hears it ring out; its terminate ends it as rejected.
		m.log.Error(err, "reject call", "call_id", e.CallID)
		return nil
	}
	// The caller's phone ends the call; nothing more reaches this device.
	return m.callEnded(e.CallID, bridge.CallRejected)
}

// rejects is why REJECT_CALLS rejects a call from caller; empty when it
// lets it ring.
func (m *Session) rejects(cli *whatsmeow.Client, caller, alt types.JID) bridge.RejectCalls {
	switch m.opts.RejectCalls {
	case bridge.RejectCallsAll:
		return bridge.RejectCallsAll
	case bridge.RejectCallsUnknown:
		if !m.isContact(cli, caller) && !m.isContact(cli, alt) {
			return bridge.RejectCallsUnknown
		}
	case bridge.RejectCallsOff, "":
	}
	return ""
}

// isContact reports whether jid is in the account's contacts (the address
// book its phone synced).
func (m *Session) isContact(cli *whatsmeow.Client, jid types.JID) bool {
	if jid.IsEmpty() || cli.Store.Contacts == nil {
		return false
	}
	info, err := cli.Store.Contacts.GetContact(m.bgCtx, jid.ToNonAD())
	return err == nil && info.Found && info.FullName != ""
}

func (m *Session) callEnded(id, how string) error {
	c, ok := m.calls.end(id, how)
	if !ok {
		return nil // not offered to this process, or ended already
	}
	c.At = m.opts.Now()
	return m.opts.Calls.CallEnded(m.bgCtx, c)
}

// isVideo reports whether an offer is for a video call.
func isVideo(e *events.CallOffer) bool {
	if e.Data == nil {
		return false
	}
	_, video := e.Data.GetOptionalChildByTag("video")
	return video
}
