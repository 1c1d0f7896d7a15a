package wasim

import (
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
)

// dispatch handles one node from the client, in the order they arrive.
//
// Faults of the client's user apply first: a ghost connection swallows
// everything (the socket stays open but nothing is answered), and slow
// answers delay every node.
func (s *Simulator) dispatch(c *conn, n *waBinary.Node) {
	if c.user != nil {
		s.mu.Lock()
		f := c.user.faults
		s.mu.Unlock()
		if f.ghost {
			return
		}
		if f.delay > 0 && !c.wait(f.delay) {
			return
		}
	}
	switch n.Tag {
	case "iq":
		switch n.Attrs["type"] {
		case "get", "set":
			s.answerIQ(c, n)
		case "result", "error":
			c.deliverResponse(n)
		}
	case "message":
		if c.user != nil {
			s.handleClientMessage(c, n)
		}
	case "receipt":
		if c.user != nil {
			s.handleClientReceipt(c, n)
		}
	case "ack":
		class, _ := n.Attrs["class"].(string)
		id, _ := n.Attrs["id"].(string)
		c.acks.settle(class, id)
		if c.user != nil && class == "message" {
			s.acked(c, id)
		}
	case "call":
		if c.user != nil {
			s.handleClientCall(c, n)
		}
	case "chatstate":
		if c.user != nil {
			s.recordChatState(c, n)
		}
	default:
		// presence, …: nothing to answer.
	}
}

// wait pauses for d unless the connection ends first.
func (c *conn) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.ctx.Done():
		return false
	}
}
