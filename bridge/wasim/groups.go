package wasim

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"slices"
	"time"

	"go.mau.fi/libsignal/protocol"
	"google.golang.org/protobuf/proto"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// Group is a simulated group chat (phone-number addressing).
type Group struct {
	sim     *Simulator
	jid     types.JID
	created time.Time
	owner   *User

	// Guarded by sim.mu: what admins change (groupadmin.go).
	subject     string
	subjectAt   time.Time
	subjectBy   *User
	description string
	descID      string
	members     []*User
	admins      map[*User]bool // besides the owner, a super admin
	invite      string         // the invite link's code
	photoID     int            // 0: no photo
}

// CreateGroup creates a group with a subject, owned by owner (a super
// admin); members are the other participants. Clients of every member see
// it in GetJoinedGroups and can send to it.
func (s *Simulator) CreateGroup(subject string, owner *User, members ...*User) *Group {
	all := []*User{owner}
	for _, m := range members {
		if !containsUser(all, m) {
			all = append(all, m)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var jid types.JID
	for {
		n, err := rand.Int(rand.Reader, big.NewInt(9e17))
		if err != nil {
			panic(fmt.Sprintf("wasim: randomness: %v", err))
		}
		jid = types.NewJID("120363"+fmt.Sprintf("%018d", n), types.GroupServer)
		if s.groups[jid] == nil {
			break
		}
	}
	now := time.Now().Truncate(time.Second)
	g := &Group{sim: s, jid: jid, subject: subject, subjectAt: now, subjectBy: owner, created: now, owner: owner,
		members: all, admins: map[*User]bool{}, invite: randomBase64(16)}
	s.groups[jid] = g
	return g
}

// Groups lists every group, oldest first.
func (s *Simulator) Groups() []*Group {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Group, 0, len(s.groups))
	for _, g := range s.groups {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *Group) int { return a.created.Compare(b.created) })
	return out
}

// LookupGroup returns a group by JID.
func (s *Simulator) LookupGroup(jid types.JID) (*Group, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[jid]
	return g, ok
}

// JID is the group's JID (…@g.us).
func (g *Group) JID() types.JID { return g.jid }

// Subject is the group's name.
func (g *Group) Subject() string {
	g.sim.mu.Lock()
	defer g.sim.mu.Unlock()
	return g.subject
}

// Members are the participants, owner first.
func (g *Group) Members() []*User {
	g.sim.mu.Lock()
	defer g.sim.mu.Unlock()
	return slices.Clone(g.members)
}

func (g *Group) hasMember(u *User) bool {
	g.sim.mu.Lock()
	defer g.sim.mu.Unlock()
	return containsUser(g.members, u)
}

// node renders the group as whatsmeow parses it (parseGroupNode):
//
//	<group id subject creation creator size s_t s_o><participant jid lid type/>…
//	  <description id t participant><body>…</body></description></group>
func (g *Group) node() waBinary.Node {
	g.sim.mu.Lock()
	defer g.sim.mu.Unlock()
	content := make([]waBinary.Node, 0, len(g.members)+1)
	for _, m := range g.members {
		attrs := waBinary.Attrs{"jid": m.jid, "lid": m.lid}
		if role := g.roleLocked(m); role != "" {
			attrs["type"] = role
		}
		content = append(content, waBinary.Node{Tag: "participant", Attrs: attrs})
	}
	if g.description != "" {
		content = append(content, waBinary.Node{Tag: "description", Attrs: waBinary.Attrs{"id": g.descID, "t": g.subjectAt.Unix()},
			Content: []waBinary.Node{{Tag: "body", Content: []byte(g.description)}}})
	}
	return waBinary.Node{Tag: "group", Attrs: waBinary.Attrs{
		"id":       g.jid.User,
		"subject":  g.subject,
		"s_t":      g.subjectAt.Unix(),
		"s_o":      g.subjectBy.jid,
		"creation": g.created.Unix(),
		"creator":  g.owner.jid,
		"size":     len(g.members),
	}, Content: content}
}

// answerGroupIQ answers xmlns="w:g2" queries:
//   - to g.us, <participating/>: the groups the client's user is in
//     (GetJoinedGroups), <groups><group/>…</groups>;
//   - to a group, <query request="interactive"/>: that group (GetGroupInfo,
//     and SendMessage before the first send to a group), 404 when unknown,
//     403 when the user is not a member.
func (s *Simulator) answerGroupIQ(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	switch firstChildTag(iq) {
	case "participating":
		s.records.mu.Lock()
		s.records.groupLists++
		s.records.mu.Unlock()
		var groups []waBinary.Node
		for _, g := range s.Groups() {
			if g.hasMember(c.user) {
				groups = append(groups, g.node())
			}
		}
		return []waBinary.Node{{Tag: "groups", Content: groups}}, nil
	case "query":
		s.records.mu.Lock()
		s.records.groupReads++
		s.records.mu.Unlock()
		return s.answerGroupQuery(c, iq)
	}
	return s.answerGroupAdmin(c, iq)
}

// answerGroupQuery answers <query request="interactive"/> to a group.
func (s *Simulator) answerGroupQuery(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	to, _ := iq.Attrs["to"].(types.JID)
	g, ok := s.LookupGroup(to)
	switch {
	case !ok:
		return nil, errNotFound
	case !g.hasMember(c.user):
		return nil, errForbidden
	}
	return []waBinary.Node{g.node()}, nil
}

// sendToGroup sends a message from u's phone to a group: one skmsg
// encrypted with u's sender key, plus the sender key itself in a 1:1
// encrypted SenderKeyDistributionMessage for each member's linked device
// (sendWithSenderKey).
func (s *Simulator) sendToGroup(ctx context.Context, u *User, to types.JID, id types.MessageID, msgType, mediaType string, plaintext []byte) error {
	g, ok := s.LookupGroup(to)
	if !ok {
		return fmt.Errorf("wasim: no group %s", to)
	}
	if !g.hasMember(u) {
		return fmt.Errorf("wasim: %s is not in %s", u.jid, to)
	}
	return s.sendWithSenderKey(ctx, u, to, g.Members(), id, msgType, mediaType, plaintext)
}

// sendWithSenderKey sends a message from u's phone to the linked devices of
// members (u left out) in chat, a group or the status broadcast: one skmsg
// encrypted with u's sender key for chat, and that sender key in a 1:1
// encrypted SenderKeyDistributionMessage for each device.
func (s *Simulator) sendWithSenderKey(ctx context.Context, u *User, to types.JID, members []*User, id types.MessageID,
	msgType, mediaType string, plaintext []byte,
) error {
	name := protocol.NewSenderKeyName(to.String(), u.jid.SignalAddress())
	skdm, ciphertext, err := u.phone.encryptGroup(ctx, name, plaintext)
	if err != nil {
		return fmt.Errorf("wasim: group encrypt: %w", err)
	}
	distribution, err := proto.Marshal(&waE2E.Message{SenderKeyDistributionMessage: &waE2E.SenderKeyDistributionMessage{
		GroupID:                             proto.String(to.String()),
		AxolotlSenderKeyDistributionMessage: skdm,
	}})
	if err != nil {
		return err
	}
	s.mu.Lock()
	senderName := u.name
	s.mu.Unlock()
	u.sent.add(id, sentMessage{plaintext: plaintext, msgType: msgType, mediaType: mediaType, group: to})
	skNode := encNode("skmsg", mediaType, ciphertext)
	for _, m := range members {
		if m == u {
			continue
		}
		for _, comp := range s.companionsOf(m) {
			encType, keyCiphertext, err := u.encryptFor(ctx, comp.jid, distribution)
			if err != nil {
				return err
			}
			attrs := u.senderAttrs(true)
			attrs["from"], attrs["id"], attrs["type"], attrs["t"], attrs["notify"] = to, id, msgType, time.Now().Unix(), senderName
			s.deliver(m, comp, waBinary.Node{Tag: "message", Attrs: attrs,
				Content: []waBinary.Node{encNode(encType, "", keyCiphertext), skNode}})
		}
	}
	return nil
}
