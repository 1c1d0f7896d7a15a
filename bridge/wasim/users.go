package wasim

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"slices"
	"strings"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// User is a simulated WhatsApp user: a phone (device 0) with a real Signal
// identity, which is also the account key that signs linked devices, plus the
// companion devices (whatsmeow clients) linked to it.
//
// The same type plays both roles tests need: the phone a client links to
// (see Simulator.Phone, ScanQR, EnterCode) and the contacts a client talks
// to (see Simulator.Contact, Send, WaitMessage). All methods are safe for
// concurrent use.
type User struct {
	sim   *Simulator
	jid   types.JID // phone-number JID, device 0
	lid   types.JID // hidden-user JID
	name  string
	phone *signalDevice
	inbox *journal[*Message]
	ticks *journal[Tick]
	// chatStates are the typing indicators clients sent to this user.
	chatStates *journal[ChatState]
	// sent are the phone's recent 1:1 messages, for retry receipts.
	sent sentLog

	// Guarded by sim.mu.
	companions map[uint16]*companion
	nextDevice uint16
	keyIndex   uint32
	faults     faults
	receipts   ReceiptMode
	addressing Addressing
	// refusesGroupAdds: only an invitation brings the user into a group.
	refusesGroupAdds bool
	// statusAudience, when set, is the whitelist of the user's status
	// privacy setting; nil: "my contacts", WhatsApp's default.
	statusAudience []*User
	// appState is the account's app state and the phone's view of it
	// (appstate.go); made on first use.
	appState *appState
}

// companion is a device linked to a user: a whatsmeow client.
type companion struct {
	jid         types.JID // AD JID, user:device@s.whatsapp.net
	noiseKey    [32]byte  // the client's Noise static key; it logs in with it
	identityKey [32]byte  // the client's Signal identity key
	conn        *conn     // the logged-in connection, nil while offline
	pending     []waBinary.Node
	// unacked are the <message> nodes written to conn that the client has
	// not acknowledged (by a <receipt> or an <ack class="message">). When
	// conn ends they go back to the front of pending: WhatsApp delivers an
	// unacknowledged message again on the next connection.
	unacked []waBinary.Node
}

// maxPending bounds what the server keeps for an offline device.
const maxPending = 1000

// ReceiptMode is what a user's phone sends back automatically for each
// message it receives.
type ReceiptMode int

const (
	// ReceiptsDelivered sends a delivery receipt for every message (the default).
	ReceiptsDelivered ReceiptMode = iota
	// ReceiptsNone sends nothing; tests send receipts with User.SendReceipt.
	ReceiptsNone
	// ReceiptsRead sends a delivery receipt and then a read receipt.
	ReceiptsRead
)

// Phone returns the user with this phone number, creating it (with a
// generated push name) if needed. Use it for the account a client links to.
// The number is digits with country code; '+', spaces and dashes are
// ignored. It panics when number has no digits (a mistake in the test).
func (s *Simulator) Phone(number string) *User {
	return s.user(number, "")
}

// Contact returns the user with this phone number and push name, creating
// it if needed (a non-empty name renames an existing user). It is the same
// kind of User as Phone returns, and panics like Phone.
func (s *Simulator) Contact(number, name string) *User {
	return s.user(number, name)
}

// Users lists every user of the network.
func (s *Simulator) Users() []*User {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*User, 0, len(s.users))
	for _, u := range s.users {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b *User) int { return strings.Compare(a.jid.User, b.jid.User) })
	return out
}

// LookupUser returns an existing user by phone number.
func (s *Simulator) LookupUser(number string) (*User, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[normalizeNumber(number)]
	return u, ok
}

func normalizeNumber(number string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, number)
}

func (s *Simulator) user(number, name string) *User {
	num := normalizeNumber(number)
	if num == "" {
		panic(fmt.Sprintf("wasim: %q is not a phone number", number))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[num]; ok {
		if name != "" {
			u.name = name
		}
		return u
	}
	return s.newUserLocked(num, name)
}

// userForNumber is user for numbers that come from clients or the control
// API: it reports bad input instead of panicking.
func (s *Simulator) userForNumber(number string) (*User, error) {
	num := normalizeNumber(number)
	if len(num) < 7 || len(num) > 15 {
		return nil, fmt.Errorf("%q is not a phone number with country code", number)
	}
	return s.user(num, ""), nil
}

// usersForNumbers is userForNumber of each number, in order.
func (s *Simulator) usersForNumbers(numbers []string) ([]*User, error) {
	users := make([]*User, 0, len(numbers))
	for _, num := range numbers {
		u, err := s.userForNumber(num)
		if err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	return users, nil
}

func (s *Simulator) newUserLocked(num, name string) *User {
	dev, err := newSignalDevice()
	if err != nil {
		// Key generation only fails if the system's randomness does.
		panic(fmt.Sprintf("wasim: generate Signal keys: %v", err))
	}
	if name == "" {
		name = "User " + num[max(0, len(num)-4):]
	}
	u := &User{
		sim:        s,
		jid:        types.NewJID(num, types.DefaultUserServer),
		lid:        s.newLIDLocked(),
		name:       name,
		phone:      dev,
		inbox:      newJournal[*Message](),
		ticks:      newJournal[Tick](),
		chatStates: newJournal[ChatState](),
		companions: map[uint16]*companion{},
		nextDevice: 1,
	}
	s.users[num] = u
	s.lids[u.lid.User] = u
	s.directory.publish(u.jid, dev.keys)
	return u
}

// newLIDLocked draws an unused 15-digit hidden-user id.
func (s *Simulator) newLIDLocked() types.JID {
	for {
		n, err := rand.Int(rand.Reader, big.NewInt(9e14))
		if err != nil {
			panic(fmt.Sprintf("wasim: randomness: %v", err))
		}
		id := n.Add(n, big.NewInt(1e14)).String()
		if s.lids[id] == nil {
			return types.NewJID(id, types.HiddenUserServer)
		}
	}
}

// JID is the user's phone-number JID (number@s.whatsapp.net).
func (u *User) JID() types.JID { return u.jid }

// LID is the user's hidden-user JID (…@lid), announced to linked clients.
func (u *User) LID() types.JID { return u.lid }

// Number is the phone number, digits only.
func (u *User) Number() string { return u.jid.User }

// Name is the push name sent with the user's messages.
func (u *User) Name() string {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	return u.name
}

// Devices lists the companion devices linked to the user.
func (u *User) Devices() []types.JID {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	out := make([]types.JID, 0, len(u.companions))
	for _, c := range u.companions {
		out = append(out, c.jid)
	}
	slices.SortFunc(out, func(a, b types.JID) int { return int(a.Device) - int(b.Device) })
	return out
}

// Online reports whether a linked device is logged in right now.
func (u *User) Online(device types.JID) bool {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	c := u.companions[device.Device]
	return c != nil && c.conn != nil
}

// WaitOnline waits until the linked device is logged in (online true) or
// not (online false; also when it is unlinked), or until ctx ends.
func (u *User) WaitOnline(ctx context.Context, device types.JID, online bool) error {
	return u.sim.waitFor(ctx, func() bool {
		c := u.companions[device.Device]
		return (c != nil && c.conn != nil && c.jid.User == device.User) == online
	})
}

// WaitLinked waits until the user has at least n linked devices.
func (u *User) WaitLinked(ctx context.Context, n int) error {
	return u.sim.waitFor(ctx, func() bool { return len(u.companions) >= n })
}

// SetReceiptMode sets what the user's phone sends back automatically for
// messages it receives.
func (u *User) SetReceiptMode(m ReceiptMode) {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	u.receipts = m
}

// deviceJIDsLocked lists the user's devices with published keys (the phone
// and companions), leaving out exclude (the asking device).
func (u *User) deviceJIDsLocked(exclude types.JID) []types.JID {
	out := []types.JID{u.jid}
	ids := make([]int, 0, len(u.companions))
	for id := range u.companions {
		ids = append(ids, int(id))
	}
	slices.Sort(ids)
	for _, id := range ids {
		c := u.companions[uint16(id)]
		if c.jid != exclude {
			out = append(out, c.jid)
		}
	}
	return out
}

// userByJIDLocked finds the user of a phone-number or LID JID.
func (s *Simulator) userByJIDLocked(jid types.JID) *User {
	switch jid.Server {
	case types.DefaultUserServer:
		return s.users[jid.User]
	case types.HiddenUserServer:
		return s.lids[jid.User]
	}
	return nil
}

// deliver sends a node to a companion device, or keeps it until the device
// is online (and not ghosted) again, as WhatsApp keeps offline messages. A
// message counts as delivered only once the client acknowledges it.
func (s *Simulator) deliver(u *User, comp *companion, n waBinary.Node) {
	s.mu.Lock()
	c := comp.conn
	if c == nil || u.faults.ghost {
		keepLocked(comp, n)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	if !s.sendTracked(c, comp, n) {
		s.mu.Lock()
		keepLocked(comp, n)
		s.mu.Unlock()
	}
}

// keepLocked files n for when the device is back.
func keepLocked(comp *companion, n waBinary.Node) {
	if len(comp.pending) < maxPending {
		comp.pending = append(comp.pending, n)
	}
}

// sendTracked writes n to c; a message then waits in comp.unacked for the
// client's acknowledgement. It reports false when the caller must keep n
// for later: the write failed, and n was not already put back by the end
// of the connection.
func (s *Simulator) sendTracked(c *conn, comp *companion, n waBinary.Node) bool {
	if n.Tag != "message" {
		return c.send(n) == nil
	}
	// Before the write: the client may acknowledge before send returns.
	s.mu.Lock()
	if comp.conn != c {
		s.mu.Unlock()
		return false // the connection ended already
	}
	comp.unacked = append(comp.unacked, n)
	s.mu.Unlock()
	if c.send(n) == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	before := len(comp.unacked)
	comp.unacked = slices.DeleteFunc(comp.unacked, func(m waBinary.Node) bool { return sameNode(m, n) })
	return before == len(comp.unacked) // gone already: requeued when the connection ended
}

// sameNode tells whether two message nodes are the same delivery.
func sameNode(a, b waBinary.Node) bool {
	return a.Attrs["id"] == b.Attrs["id"] && a.Attrs["from"] == b.Attrs["from"]
}

// acked forgets the messages with these ids the device of c acknowledged.
func (s *Simulator) acked(c *conn, ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	comp := c.user.companions[c.device.Device]
	if comp == nil {
		return
	}
	comp.unacked = slices.DeleteFunc(comp.unacked, func(m waBinary.Node) bool {
		id, _ := m.Attrs["id"].(string)
		return slices.Contains(ids, id)
	})
}

// requeueUnackedLocked puts what the ended connection left unacknowledged
// in front of what waits for the device.
func requeueUnackedLocked(comp *companion) {
	if len(comp.unacked) == 0 {
		return
	}
	comp.pending = append(comp.unacked, comp.pending...)
	if len(comp.pending) > maxPending {
		comp.pending = comp.pending[:maxPending]
	}
	comp.unacked = nil
}

// flushPending sends what was kept for a device while it was away.
func (s *Simulator) flushPending(u *User, comp *companion) {
	s.mu.Lock()
	c := comp.conn
	if c == nil || u.faults.ghost {
		s.mu.Unlock()
		return
	}
	pending := comp.pending
	comp.pending = nil
	s.mu.Unlock()
	for i, n := range pending {
		if !s.sendTracked(c, comp, n) {
			s.mu.Lock()
			comp.pending = append(pending[i:], comp.pending...)
			s.mu.Unlock()
			return
		}
	}
}

// companionsOf returns the user's companions (optionally only one device).
func (s *Simulator) companionsOf(u *User) []*companion {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*companion, 0, len(u.companions))
	for _, c := range u.companions {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *companion) int { return int(a.jid.Device) - int(b.jid.Device) })
	return out
}
