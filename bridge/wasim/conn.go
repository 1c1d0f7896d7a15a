package wasim

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waWa6"
	"go.mau.fi/whatsmeow/socket"
	"go.mau.fi/whatsmeow/types"
)

const (
	handshakeTimeout = 20 * time.Second
	writeTimeout     = 10 * time.Second
)

// conn is one client connection: the WebSocket, the transport keys from the
// Noise handshake, and who is on the other end once it is known.
type conn struct {
	sim    *Simulator
	ws     *websocket.Conn
	fc     *frameConn
	ctx    context.Context // done when the connection ends
	cancel context.CancelFunc

	keys         transportKeys
	readCounter  uint32 // only the read loop touches it
	writeMu      sync.Mutex
	writeCounter uint32

	clientStatic [32]byte
	payload      *waWa6.ClientPayload

	// user and device are set once, at login, before the read loop starts.
	user   *User
	device types.JID

	waitMu  sync.Mutex
	waiters map[string]chan *waBinary.Node // server-initiated IQs by id
	nextID  atomic.Uint64

	acks ackLedger
}

func (s *Simulator) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	var c *conn
	ok := s.register(func() {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
			// The client sends Origin https://web.whatsapp.com, which is not
			// this host; the Noise handshake authenticates both ends anyway.
			InsecureSkipVerify: true,
		})
		if err != nil {
			return
		}
		// The first prekey upload is about 37 KB, over the 32 KiB default.
		ws.SetReadLimit(socket.FrameMaxSize + 64)
		ctx, cancel := context.WithCancel(s.ctx)
		c = &conn{sim: s, ws: ws, fc: newFrameConn(ws), ctx: ctx, cancel: cancel, waiters: map[string]chan *waBinary.Node{}}
	})
	if !ok {
		http.Error(w, "simulator closed", http.StatusServiceUnavailable)
		return
	}
	defer s.wg.Done()
	if c == nil {
		return
	}
	defer s.connEnded(c)
	c.run()
}

// register adds a connection handler to the wait group (and lets setup
// create the conn) unless the simulator is closed. The conn is added to the
// set Close disconnects.
func (s *Simulator) register(setup func()) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.wg.Add(1)
	s.mu.Unlock()
	setup()
	return true
}

func (c *conn) run() {
	c.sim.mu.Lock()
	if c.sim.closed {
		c.sim.mu.Unlock()
		c.closeNow()
		return
	}
	c.sim.conns[c] = struct{}{}
	c.sim.mu.Unlock()

	hsCtx, cancel := context.WithTimeout(c.ctx, handshakeTimeout)
	hs, err := serverHandshake(hsCtx, c.fc, c.sim.static, c.sim.certChain)
	cancel()
	if err != nil {
		c.sim.log.Debugf("handshake: %v", err)
		c.closeNow()
		return
	}
	c.keys, c.clientStatic, c.payload = hs.keys, hs.clientStatic, hs.payload

	accepted := true
	c.sim.mu.Lock()
	outdated := c.sim.versions.handshakeLocked(c.payload)
	c.sim.mu.Unlock()
	switch {
	case outdated:
		// WhatsApp refuses an outdated client before anything else, a new
		// device's registration as much as a login.
		c.sendAndClose(failureNode(405, nil))
		accepted = false
	case c.payload.GetDevicePairingData() != nil:
		c.sim.startRegistration(c)
	default:
		accepted = c.sim.login(c)
	}
	for {
		node, err := c.readNode()
		if err != nil {
			if c.ctx.Err() == nil {
				c.sim.log.Debugf("connection %s ended: %v", c, err)
			}
			c.closeNow()
			return
		}
		// A refused login is read (and ignored) until the socket closes, so
		// that the client handles the <failure> before it sees the end.
		if accepted {
			c.sim.dispatch(c, node)
		}
	}
}

func (c *conn) String() string {
	if !c.device.IsEmpty() {
		return c.device.String()
	}
	return "unpaired client"
}

// readNode reads, decrypts and decodes the next node from the client.
func (c *conn) readNode() (*waBinary.Node, error) {
	frame, err := c.fc.readFrame(c.ctx)
	if err != nil {
		return nil, err
	}
	plain, err := c.keys.read.Open(nil, nonce(c.readCounter), frame, nil)
	c.readCounter++
	if err != nil {
		return nil, fmt.Errorf("decrypt frame: %w", err)
	}
	unpacked, err := waBinary.Unpack(plain)
	if err != nil {
		return nil, fmt.Errorf("unpack frame: %w", err)
	}
	return waBinary.Unmarshal(unpacked)
}

var errConnClosed = errors.New("connection closed")

// send encodes, encrypts and writes one node. A failed write ends the
// connection, as the client would see it.
func (c *conn) send(n waBinary.Node) error {
	raw, err := waBinary.Marshal(n)
	if err != nil {
		return fmt.Errorf("marshal <%s>: %w", n.Tag, err)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.ctx.Err() != nil {
		return errConnClosed
	}
	c.acks.expect(n)
	sealed := c.keys.write.Seal(nil, nonce(c.writeCounter), raw, nil)
	c.writeCounter++
	ctx, cancel := context.WithTimeout(c.ctx, writeTimeout)
	defer cancel()
	if err := c.fc.writeFrame(ctx, sealed); err != nil {
		c.cancel()
		_ = c.ws.CloseNow()
		return err
	}
	return nil
}

// closeNow drops the socket without a closing handshake, like a network cut.
func (c *conn) closeNow() {
	c.cancel()
	_ = c.ws.CloseNow()
}

// sendAndClose sends a final node (a stream error or a connect failure) and
// closes the socket after the simulator's grace period, or earlier if the
// client hangs up first.
func (c *conn) sendAndClose(n waBinary.Node) {
	if err := c.send(n); err != nil {
		c.closeNow()
		return
	}
	grace := c.sim.opts.CloseGrace
	if !c.sim.goTracked(func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.ctx.Done():
		}
		c.closeNow()
	}) {
		c.closeNow()
	}
}

// request sends a server-initiated IQ and waits for the client's result or
// error with the same id.
func (c *conn) request(ctx context.Context, iq waBinary.Node) (*waBinary.Node, error) {
	id := "wasim-" + strconv.FormatUint(c.nextID.Add(1), 10)
	iq.Attrs["id"] = id
	ch := make(chan *waBinary.Node, 1)
	c.waitMu.Lock()
	c.waiters[id] = ch
	c.waitMu.Unlock()
	defer func() {
		c.waitMu.Lock()
		delete(c.waiters, id)
		c.waitMu.Unlock()
	}()
	if err := c.send(iq); err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, errConnClosed
	}
}

// deliverResponse hands the client's answer to a server-initiated IQ to its waiter.
func (c *conn) deliverResponse(n *waBinary.Node) {
	id, _ := n.Attrs["id"].(string)
	c.waitMu.Lock()
	ch := c.waiters[id]
	c.waitMu.Unlock()
	if ch != nil {
		select {
		case ch <- n:
		default:
		}
	}
}

// connEnded forgets a finished connection everywhere it is referenced.
func (s *Simulator) connEnded(c *conn) {
	c.closeNow()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	for ref, rc := range s.qrRefs {
		if rc == c {
			delete(s.qrRefs, ref)
		}
	}
	for ref, p := range s.codePairs {
		if p.conn == c {
			delete(s.codePairs, ref)
		}
	}
	if c.user != nil {
		if comp := c.user.companions[c.device.Device]; comp != nil && comp.conn == c {
			comp.conn = nil
			requeueUnackedLocked(comp)
			s.notifyLocked()
		}
	}
}
