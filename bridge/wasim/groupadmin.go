package wasim

import (
	"slices"
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Group administration as WhatsApp answers it (xmlns="w:g2" sets, and
// w:profile:picture for the photo), and the w:gp2 notifications every
// member's devices get for each change.
//
// Rights: any member may change the subject, description and photo (a
// group is not "locked" here); only admins (the owner, a super admin, and
// those promoted) may add, remove, promote, demote and read or reset the
// invite link. A member who is not an admin gets <error code="401"
// text="not-authorized"/>, someone who is not a member 403 forbidden, an
// unknown group 404.

// The per-participant codes of an add/remove/promote/demote answer
// (<participant jid error=…/>; none on success).
const (
	participantPrivacy    = 403 // the user only lets contacts add them: an invite is due instead
	participantNotFound   = 404 // not on WhatsApp, or (remove, promote, demote) not in the group
	participantNotAllowed = 406 // the owner cannot be removed or demoted
	participantExists     = 409 // already in the group
)

var (
	errNotAcceptable = &iqError{406, "not-acceptable"}
	errGone          = &iqError{410, "gone"}
)

// groupAdmin is the network's memory of group administration, guarded by
// Simulator.mu.
type groupAdmin struct {
	revokedInvites map[string]bool // invite codes reset since (410 gone)
	photoIDs       int             // the last group photo's id
}

// RefuseGroupAdds sets the user's privacy setting "who can add me to
// groups" to nobody: an add or a create that names the user is answered,
// for that participant, with 403 and an add_request (the code of an
// invitation the admin may send instead).
func (u *User) RefuseGroupAdds(refuse bool) {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	u.refusesGroupAdds = refuse
}

// roleLocked is the participant type of m: superadmin, admin or "".
func (g *Group) roleLocked(m *User) string {
	switch {
	case m == g.owner:
		return "superadmin"
	case g.admins[m]:
		return "admin"
	}
	return ""
}

// IsAdmin reports whether u is an admin of the group (the owner is).
func (g *Group) IsAdmin(u *User) bool {
	g.sim.mu.Lock()
	defer g.sim.mu.Unlock()
	return g.roleLocked(u) != ""
}

// Description is the group's description ("" when none).
func (g *Group) Description() string {
	g.sim.mu.Lock()
	defer g.sim.mu.Unlock()
	return g.description
}

// InviteCode is the code of the group's current invite link.
func (g *Group) InviteCode() string {
	g.sim.mu.Lock()
	defer g.sim.mu.Unlock()
	return g.invite
}

// PhotoID is the id of the group's photo, "" when it has none.
func (g *Group) PhotoID() string {
	g.sim.mu.Lock()
	defer g.sim.mu.Unlock()
	if g.photoID == 0 {
		return ""
	}
	return strconv.Itoa(g.photoID)
}

// answerGroupAdmin answers the w:g2 sets (and the invite get): to g.us,
// create, leave and the invite code's info or join; to a group, the
// changes of its members and info.
func (s *Simulator) answerGroupAdmin(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	child := iq.GetChildren()[0]
	to, _ := iq.Attrs["to"].(types.JID)
	if to == types.GroupServerJID {
		switch child.Tag {
		case "create":
			return s.createByClient(c.user, &child)
		case "leave":
			return s.leave(c.user, &child)
		case "invite":
			return s.byInviteCode(c.user, iq, &child)
		}
		return nil, errNotImplemented
	}
	g, ok := s.LookupGroup(to)
	switch {
	case !ok:
		return nil, errNotFound
	case !g.hasMember(c.user):
		return nil, errForbidden
	}
	switch child.Tag {
	case "subject":
		return g.setSubject(c.user, &child)
	case "description":
		return g.setDescription(c.user, &child)
	}
	if !g.IsAdmin(c.user) {
		return nil, errNotAuthorized
	}
	switch child.Tag {
	case "add", "remove", "promote", "demote":
		return g.changeParticipants(c.user, &child)
	case "invite":
		return g.inviteLink(c.user, iq)
	}
	return nil, errNotImplemented
}

// createByClient answers <create subject key><participant jid/>…</create>:
// the client's user owns the new group; participants whose privacy refuses
// the add are left out and answered with 403 and an add_request.
func (s *Simulator) createByClient(u *User, create *waBinary.Node) ([]waBinary.Node, *iqError) {
	subject, _ := create.Attrs["subject"].(string)
	if subject == "" || len(subject) > 100 {
		return nil, errNotAcceptable
	}
	g := s.CreateGroup(subject, u)
	var refused []waBinary.Node
	for _, p := range create.GetChildrenByTag("participant") {
		jid, _ := p.Attrs["jid"].(types.JID)
		if code, result := g.addLocked(u, jid); code != 0 {
			refused = append(refused, result)
		}
	}
	node := g.node()
	node.Content = append(node.Content.([]waBinary.Node), refused...)
	key, _ := create.Attrs["key"].(string)
	s.notifyMembers(g, u, waBinary.Node{Tag: "create", Attrs: waBinary.Attrs{"key": key, "type": "new"},
		Content: []waBinary.Node{g.node()}})
	return []waBinary.Node{node}, nil
}

// addLocked adds jid to g on behalf of admin, taking the simulator's lock:
// 0 and the participant node on success, else the code and the node that
// answers it.
func (g *Group) addLocked(admin *User, jid types.JID) (int, waBinary.Node) {
	s := g.sim
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.userByJIDLocked(jid)
	code := 0
	switch {
	case u == nil:
		code = participantNotFound
	case containsUser(g.members, u):
		code = participantExists
	case u.refusesGroupAdds && u != admin:
		code = participantPrivacy
	default:
		g.members = append(g.members, u)
		return 0, participantNode(u, jid)
	}
	n := waBinary.Node{Tag: "participant", Attrs: waBinary.Attrs{"jid": jid, "error": code}}
	if code == participantPrivacy {
		n.Content = []waBinary.Node{{Tag: "add_request", Attrs: waBinary.Attrs{
			"code": randomBase64(12), "expiration": time.Now().Add(3 * 24 * time.Hour).Unix()}}}
	}
	return code, n
}

// participantNode names u as the client named it, with the other address
// (lid of a phone number, phone_number of a LID) as WhatsApp adds it.
func participantNode(u *User, asked types.JID) waBinary.Node {
	if asked.Server == types.HiddenUserServer {
		return waBinary.Node{Tag: "participant", Attrs: waBinary.Attrs{"jid": u.lid, "phone_number": u.jid}}
	}
	return waBinary.Node{Tag: "participant", Attrs: waBinary.Attrs{"jid": u.jid, "lid": u.lid}}
}

// changeParticipants answers <add|remove|promote|demote><participant jid/>…:
// a result per participant, and one notification of the changes that took
// effect to every member (and to those removed).
func (g *Group) changeParticipants(admin *User, action *waBinary.Node) ([]waBinary.Node, *iqError) {
	answers := make([]waBinary.Node, 0, len(action.GetChildren()))
	var changed []waBinary.Node
	removed := []*User{}
	for _, p := range action.GetChildrenByTag("participant") {
		jid, _ := p.Attrs["jid"].(types.JID)
		var code int
		var result waBinary.Node
		if action.Tag == "add" {
			code, result = g.addLocked(admin, jid)
		} else {
			var gone *User
			code, result, gone = g.changeMember(action.Tag, jid)
			if gone != nil {
				removed = append(removed, gone)
			}
		}
		answers = append(answers, result)
		if code == 0 {
			changed = append(changed, result)
		}
	}
	if len(changed) > 0 {
		g.sim.notifyMembers(g, admin, waBinary.Node{Tag: action.Tag, Content: changed}, removed...)
	}
	return []waBinary.Node{{Tag: action.Tag, Content: answers}}, nil
}

// changeMember removes, promotes or demotes the member jid names: 0 and
// the participant node on success (and the user when removed), else the
// code and its answer.
func (g *Group) changeMember(action string, jid types.JID) (int, waBinary.Node, *User) {
	s := g.sim
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.userByJIDLocked(jid)
	code := 0
	switch {
	case u == nil || !containsUser(g.members, u):
		code = participantNotFound
	case u == g.owner && action != "promote":
		code = participantNotAllowed
	}
	if code != 0 {
		return code, waBinary.Node{Tag: "participant", Attrs: waBinary.Attrs{"jid": jid, "error": code}}, nil
	}
	var gone *User
	switch action {
	case "remove":
		g.members = slices.DeleteFunc(g.members, func(m *User) bool { return m == u })
		delete(g.admins, u)
		gone = u
	case "promote":
		if u != g.owner {
			g.admins[u] = true
		}
	case "demote":
		delete(g.admins, u)
	}
	return 0, participantNode(u, jid), gone
}

// setSubject answers <subject>name</subject>.
func (g *Group) setSubject(u *User, n *waBinary.Node) ([]waBinary.Node, *iqError) {
	name, _ := n.Content.([]byte)
	if len(name) == 0 || len(name) > 100 {
		return nil, errNotAcceptable
	}
	now := time.Now()
	g.sim.mu.Lock()
	g.subject, g.subjectAt, g.subjectBy = string(name), now, u
	g.sim.mu.Unlock()
	g.sim.notifyMembers(g, u, waBinary.Node{Tag: "subject", Attrs: waBinary.Attrs{
		"subject": string(name), "s_t": now.Unix(), "s_o": u.jid}})
	return nil, nil
}

// setDescription answers <description id prev><body>text</body></description>
// (or delete="true" without a body; SetGroupTopic names the id,
// SetGroupDescription does not).
func (g *Group) setDescription(u *User, n *waBinary.Node) ([]waBinary.Node, *iqError) {
	id, _ := n.Attrs["id"].(string)
	body, _ := n.GetOptionalChildByTag("body")
	text, _ := body.Content.([]byte)
	if len(text) > 2048 {
		return nil, errNotAcceptable
	}
	if id == "" {
		id = randomBase64(9) // SetGroupDescription names none; WhatsApp draws one
	}
	g.sim.mu.Lock()
	g.description, g.descID = string(text), id
	g.sim.mu.Unlock()
	change := waBinary.Node{Tag: "description", Attrs: waBinary.Attrs{"id": id}}
	if len(text) == 0 {
		change.Content = []waBinary.Node{{Tag: "delete"}}
	} else {
		change.Content = []waBinary.Node{{Tag: "body", Content: text}}
	}
	g.sim.notifyMembers(g, u, change)
	return nil, nil
}

// inviteLink answers <invite/> to a group: get reads the code, set revokes
// it and draws a new one (the old one then answers 410 gone).
func (g *Group) inviteLink(u *User, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	g.sim.mu.Lock()
	if iq.Attrs["type"] == "set" {
		if g.sim.admin.revokedInvites == nil {
			g.sim.admin.revokedInvites = map[string]bool{}
		}
		g.sim.admin.revokedInvites[g.invite] = true
		g.invite = randomBase64(16)
	}
	code := g.invite
	g.sim.mu.Unlock()
	if iq.Attrs["type"] == "set" {
		g.sim.notifyMembers(g, u, waBinary.Node{Tag: "invite", Attrs: waBinary.Attrs{"code": code}})
	}
	return []waBinary.Node{{Tag: "invite", Attrs: waBinary.Attrs{"code": code}}}, nil
}

// byInviteCode answers <invite code/> to g.us: get shows the group, set
// joins it. A revoked code is 410 gone, an unknown one 406.
func (s *Simulator) byInviteCode(u *User, iq *waBinary.Node, n *waBinary.Node) ([]waBinary.Node, *iqError) {
	code, _ := n.Attrs["code"].(string)
	g, iqErr := s.groupOfInvite(code)
	if iqErr != nil {
		return nil, iqErr
	}
	if iq.Attrs["type"] != "set" {
		return []waBinary.Node{g.node()}, nil
	}
	s.mu.Lock()
	joined := !containsUser(g.members, u)
	if joined {
		g.members = append(g.members, u)
	}
	s.mu.Unlock()
	if joined {
		s.notifyMembers(g, u, waBinary.Node{Tag: "add", Attrs: waBinary.Attrs{"reason": "invite"},
			Content: []waBinary.Node{participantNode(u, u.jid)}})
	}
	return []waBinary.Node{{Tag: "group", Attrs: waBinary.Attrs{"jid": g.jid}}}, nil
}

func (s *Simulator) groupOfInvite(code string) (*Group, *iqError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.groups {
		if g.invite == code && code != "" {
			return g, nil
		}
	}
	if s.admin.revokedInvites[code] {
		return nil, errGone
	}
	return nil, errNotAcceptable
}

// leave answers <leave><group id/></leave>.
func (s *Simulator) leave(u *User, n *waBinary.Node) ([]waBinary.Node, *iqError) {
	groupNode := n.GetChildByTag("group")
	jid, _ := groupNode.Attrs["id"].(types.JID)
	g, ok := s.LookupGroup(jid)
	if !ok {
		return nil, errNotFound
	}
	s.mu.Lock()
	member := containsUser(g.members, u)
	g.members = slices.DeleteFunc(g.members, func(m *User) bool { return m == u })
	delete(g.admins, u)
	s.mu.Unlock()
	if !member {
		return nil, errForbidden
	}
	s.notifyMembers(g, u, waBinary.Node{Tag: "remove", Attrs: waBinary.Attrs{"reason": "leave"},
		Content: []waBinary.Node{participantNode(u, u.jid)}}, u)
	return []waBinary.Node{{Tag: "leave", Content: []waBinary.Node{{Tag: "group", Attrs: waBinary.Attrs{"id": jid}}}}}, nil
}

// answerGroupPhoto answers <iq xmlns="w:profile:picture" type="set"
// target=group><picture type="image">jpeg</picture></iq> (no picture:
// remove it) with the new photo's id, and tells the members.
func (s *Simulator) answerGroupPhoto(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	target, _ := iq.Attrs["target"].(types.JID)
	g, ok := s.LookupGroup(target)
	switch {
	case !ok:
		return nil, errNotFound
	case !g.hasMember(c.user):
		return nil, errForbidden
	}
	pic, set := iq.GetOptionalChildByTag("picture")
	if data, _ := pic.Content.([]byte); set && !isJPEG(data) {
		return nil, errNotAcceptable
	}
	s.mu.Lock()
	if set {
		s.admin.photoIDs++
		g.photoID = s.admin.photoIDs
	} else {
		g.photoID = 0
	}
	id := g.photoID
	s.mu.Unlock()
	change := waBinary.Node{Tag: "delete", Attrs: waBinary.Attrs{"jid": g.jid, "author": c.user.jid}}
	if set {
		change = waBinary.Node{Tag: "set", Attrs: waBinary.Attrs{"jid": g.jid, "id": strconv.Itoa(id), "author": c.user.jid}}
	}
	s.sendToMembers(g, waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
		"from": g.jid, "type": "picture", "id": randomBase64(9), "t": time.Now().Unix()}, Content: []waBinary.Node{change}})
	if !set {
		return nil, nil
	}
	return []waBinary.Node{{Tag: "picture", Attrs: waBinary.Attrs{"id": strconv.Itoa(id)}}}, nil
}

// isJPEG reports data that starts as a JPEG file does.
func isJPEG(data []byte) bool {
	return len(data) > 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff
}

// notifyMembers sends a w:gp2 notification of change by actor to every
// device of every member, and of also (members who just left).
func (s *Simulator) notifyMembers(g *Group, actor *User, change waBinary.Node, also ...*User) {
	s.mu.Lock()
	notify := actor.name
	s.mu.Unlock()
	s.sendToMembers(g, waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
		"from": g.jid, "type": "w:gp2", "id": randomBase64(9), "t": time.Now().Unix(),
		"participant": actor.jid, "notify": notify,
	}, Content: []waBinary.Node{change}}, also...)
}

// sendToMembers delivers n to every linked device of every member and of
// also; the phones themselves keep no record of it.
func (s *Simulator) sendToMembers(g *Group, n waBinary.Node, also ...*User) {
	for _, m := range append(g.Members(), also...) {
		for _, comp := range s.companionsOf(m) {
			s.deliver(m, comp, n)
		}
	}
}

// ChangeMembers is an admin's phone adding, removing, promoting or
// demoting members (action "add", "remove", "promote" or "demote"): the
// members' linked devices get the notification. It returns the code per
// member (0: done), as the admin's phone was answered.
func (g *Group) ChangeMembers(admin *User, action string, members ...*User) []int {
	n := waBinary.Node{Tag: action}
	for _, m := range members {
		n.Content = append(n.GetChildren(), waBinary.Node{Tag: "participant", Attrs: waBinary.Attrs{"jid": m.jid}})
	}
	answer, _ := g.changeParticipants(admin, &n)
	codes := make([]int, 0, len(members))
	for _, p := range answer[0].GetChildren() {
		code, _ := p.Attrs["error"].(int)
		codes = append(codes, code)
	}
	return codes
}

// SetSubject is a member's phone renaming the group.
func (g *Group) SetSubject(by *User, subject string) {
	_, _ = g.setSubject(by, &waBinary.Node{Tag: "subject", Content: []byte(subject)})
}
