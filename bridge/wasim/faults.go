package wasim

import (
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Faults act on the companion devices linked to a user (the clients under
// test). Each method documents what happens on the wire and which whatsmeow
// event follows.

// faults is a user's fault state, guarded by sim.mu.
type faults struct {
	ghost        bool
	delay        time.Duration
	sendFailures int
	sendFailHow  SendFailure
	sendFailCode int
	ban          *banFault
	outdated     bool
	// reachoutUntil: sends are refused with 463 until then (protect.go).
	reachoutUntil time.Time
}

type banFault struct {
	code   int
	expire time.Duration
}

// SendFailure is how the server makes a client's send fail (see FailSends).
type SendFailure int

const (
	// FailAck answers the <message> with an error ack
	// (<ack class="message" error="500"/>); whatsmeow's SendMessage returns
	// ErrServerReturnedError. The message is not delivered.
	FailAck SendFailure = iota
	// FailDeviceList answers the usync device-list query with an IQ error, so
	// SendMessage fails before anything is sent. whatsmeow caches device
	// lists, so only sends to recipients it has not looked up yet query.
	FailDeviceList
)

// internal fault points checked by the IQ and message handlers.
const (
	faultNack = iota
	faultUsync
)

// takeSendFault consumes one planned send failure of u matching point.
func (s *Simulator) takeSendFault(u *User, point int) bool {
	if u == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &u.faults
	if f.sendFailures <= 0 {
		return false
	}
	match := (point == faultNack && f.sendFailHow == FailAck) || (point == faultUsync && f.sendFailHow == FailDeviceList)
	if !match {
		return false
	}
	f.sendFailures--
	return true
}

// FailSends makes the next n sends of the user's clients fail the given way
// (code is the error code for FailAck; 0 means 500), e.g. to drive a retry
// schedule. n = 0 cancels what is left.
func (u *User) FailSends(n int, how SendFailure, code int) {
	if code == 0 {
		code = 500
	}
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	u.faults.sendFailures, u.faults.sendFailHow, u.faults.sendFailCode = max(n, 0), how, code
}

// PendingSendFailures is how many planned send failures are left.
func (u *User) PendingSendFailures() int {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	return u.faults.sendFailures
}

// StopAnswering turns the user's connections into ghosts: the sockets stay
// open but the server ignores everything the clients send (keepalive pings,
// IQs, messages) and sends nothing (messages for them are kept). whatsmeow
// emits events.KeepAliveTimeout for every missed ping; after
// KeepAliveMaxFailTime (3 min) it reconnects, and the new connection logs
// in and is then ignored like the old one until ResumeAnswering.
func (u *User) StopAnswering() {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	u.faults.ghost = true
}

// ResumeAnswering ends StopAnswering and sends what was kept meanwhile;
// whatsmeow emits events.KeepAliveRestored after its next ping.
func (u *User) ResumeAnswering() {
	s := u.sim
	s.mu.Lock()
	u.faults.ghost = false
	s.mu.Unlock()
	for _, comp := range s.companionsOf(u) {
		s.flushPending(u, comp)
	}
}

// SetDelay delays every answer to the user's clients (IQ results, acks) by
// d; 0 ends it. Delays over the keepalive deadline cause keepalive timeouts.
func (u *User) SetDelay(d time.Duration) {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	u.faults.delay = max(d, 0)
}

// DropConnections cuts the sockets of the user's clients without a
// WebSocket close (like a network failure). whatsmeow emits
// events.Disconnected and reconnects by itself.
func (u *User) DropConnections() int {
	conns := u.liveConns()
	for _, c := range conns {
		c.closeNow()
	}
	return len(conns)
}

// ReplaceStream sends <stream:error><conflict type="replaced"/></stream:error>
// to the user's clients and closes their sockets, as when the same
// credentials log in elsewhere. whatsmeow emits events.StreamReplaced and
// does not reconnect.
func (u *User) ReplaceStream() int {
	conns := u.liveConns()
	for _, c := range conns {
		c.sendAndClose(streamErrorReplaced())
	}
	return len(conns)
}

// LogOutDevices unlinks every companion device, as "log out all devices" on
// the phone does: connected clients get
// <stream:error code="401"><conflict type="device_removed"/></stream:error>
// (whatsmeow: events.LoggedOut with OnConnect false, and it deletes its
// credentials); offline ones get <failure reason="401"/> when they next
// connect (events.LoggedOut with OnConnect true).
func (u *User) LogOutDevices() int {
	s := u.sim
	n := 0
	for _, comp := range s.companionsOf(u) {
		if c := s.unlink(u, comp.jid.Device); c != nil {
			c.sendAndClose(streamErrorDeviceRemoved())
		}
		n++
	}
	return n
}

// unlink removes a companion device and its published keys and returns its
// live connection, if any.
func (s *Simulator) unlink(u *User, device uint16) *conn {
	s.mu.Lock()
	comp := u.companions[device]
	delete(u.companions, device)
	s.notifyLocked()
	s.mu.Unlock()
	if comp == nil {
		return nil
	}
	s.directory.forget(comp.jid)
	s.log.Infof("unlinked %s", comp.jid)
	return comp.conn
}

// TempBan bans the account temporarily: connected clients and every later
// login get <failure reason="402" code expire/> and the socket is closed.
// whatsmeow emits events.TemporaryBan{Code, Expire} and does not reconnect.
// code is a whatsmeow events.TempBanReason (e.g. 101); expire is rounded to
// seconds.
func (u *User) TempBan(code int, expire time.Duration) int {
	s := u.sim
	s.mu.Lock()
	u.faults.ban = &banFault{code: code, expire: expire}
	s.mu.Unlock()
	conns := u.liveConns()
	for _, c := range conns {
		c.sendAndClose(*failureForLoginLocked(&faults{ban: &banFault{code: code, expire: expire}}))
	}
	return len(conns)
}

// LiftBan ends TempBan; clients can log in again (they must call Connect).
func (u *User) LiftBan() {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	u.faults.ban = nil
}

// SetClientOutdated makes logins fail with <failure reason="405"/> (and
// disconnects connected clients that way): whatsmeow emits
// events.ClientOutdated and does not reconnect.
func (u *User) SetClientOutdated(outdated bool) int {
	s := u.sim
	s.mu.Lock()
	u.faults.outdated = outdated
	s.mu.Unlock()
	if !outdated {
		return 0
	}
	conns := u.liveConns()
	for _, c := range conns {
		c.sendAndClose(failureNode(405, nil))
	}
	return len(conns)
}

// ClearFaults ends every fault of the user (ghost, delay, planned send
// failures, ban, outdated).
func (u *User) ClearFaults() {
	u.sim.mu.Lock()
	u.faults = faults{}
	u.sim.mu.Unlock()
	u.ResumeAnswering()
}

// failureForLoginLocked is the connect failure a login gets under f, if any.
func failureForLoginLocked(f *faults) *waBinary.Node {
	switch {
	case f.ban != nil:
		n := failureNode(402, waBinary.Attrs{"code": f.ban.code, "expire": int(f.ban.expire / time.Second)})
		return &n
	case f.outdated:
		n := failureNode(405, nil)
		return &n
	}
	return nil
}

// liveConns lists the logged-in connections of the user's companions.
func (u *User) liveConns() []*conn {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	var out []*conn
	for _, comp := range u.companions {
		if comp.conn != nil {
			out = append(out, comp.conn)
		}
	}
	return out
}

// Connected lists the devices of the user that are logged in now.
func (u *User) Connected() []types.JID {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	var out []types.JID
	for _, comp := range u.companions {
		if comp.conn != nil {
			out = append(out, comp.jid)
		}
	}
	return out
}
