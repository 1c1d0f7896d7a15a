package wasim

import (
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// login authenticates a returning companion by its phone number, device id
// and Noise key, then sends <success> and whatever was kept for it while it
// was offline. It reports false when the connection was refused.
func (s *Simulator) login(c *conn) bool {
	num := strconv.FormatUint(c.payload.GetUsername(), 10)
	dev := c.payload.GetDevice()
	s.mu.Lock()
	u := s.users[num]
	var comp *companion
	if u != nil && dev <= 0xffff {
		comp = u.companions[uint16(dev)]
	}
	if comp == nil || comp.noiseKey != c.clientStatic {
		s.mu.Unlock()
		// Unknown or removed device: WhatsApp answers 401 (logged out).
		c.sendAndClose(failureNode(401, nil))
		return false
	}
	if f := failureForLoginLocked(&u.faults); f != nil {
		s.mu.Unlock()
		c.sendAndClose(*f)
		return false
	}
	old := comp.conn
	comp.conn = c
	c.user, c.device = u, comp.jid
	// The device's own LID, as WhatsApp names it in <success>: whatsmeow
	// keeps it as the account's LID and leaves that device out of sends.
	lid := types.NewADJID(u.lid.User, types.LIDDomain, uint8(comp.jid.Device))
	s.notifyLocked()
	s.mu.Unlock()
	if old != nil {
		// A second login with the same credentials replaces the first.
		old.sendAndClose(streamErrorReplaced())
	}
	err := c.send(waBinary.Node{Tag: "success", Attrs: waBinary.Attrs{
		"t":        time.Now().Unix(),
		"lid":      lid,
		"props":    "1",
		"location": "wasim",
	}})
	if err != nil {
		return false
	}
	s.logins.record(u.jid.User, time.Now())
	s.flushPending(u, comp)
	return true
}

// failureNode is a <failure reason/> connect failure, whatsmeow's
// events.ConnectFailure family (401 logged out, 402 banned, 405 outdated).
func failureNode(reason int, attrs waBinary.Attrs) waBinary.Node {
	a := waBinary.Attrs{"reason": reason, "location": "wasim"}
	for k, v := range attrs {
		a[k] = v
	}
	return waBinary.Node{Tag: "failure", Attrs: a}
}

func streamErrorReplaced() waBinary.Node {
	return waBinary.Node{Tag: "stream:error", Content: []waBinary.Node{
		{Tag: "conflict", Attrs: waBinary.Attrs{"type": "replaced"}},
	}}
}

func streamErrorDeviceRemoved() waBinary.Node {
	return waBinary.Node{Tag: "stream:error", Attrs: waBinary.Attrs{"code": "401"}, Content: []waBinary.Node{
		{Tag: "conflict", Attrs: waBinary.Attrs{"type": "device_removed"}},
	}}
}

// streamErrorRestart (515) tells a freshly paired client to reconnect and log in.
func streamErrorRestart() waBinary.Node {
	return waBinary.Node{Tag: "stream:error", Attrs: waBinary.Attrs{"code": "515"}}
}

func serverIQ(typ string, content ...waBinary.Node) waBinary.Node {
	return waBinary.Node{Tag: "iq", Attrs: waBinary.Attrs{"from": types.ServerJID, "type": typ}, Content: content}
}
