package whatsapp

import (
	"context"
	"errors"
	"fmt"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge"
)

// Group administration through the linked account. Each method is one
// query to WhatsApp; the pace of these actions is the caller's (the API's
// group action budget), never the send queue's.

// groupJID reads a group recipient as whatsmeow names it.
func groupJID(g bridge.Recipient) (types.JID, error) {
	if g.Kind != bridge.RecipientGroup {
		return types.EmptyJID, bridge.ErrInvalidRecipient
	}
	return types.ParseJID(g.JID())
}

// groupError maps WhatsApp's answers to a group query: 401 is an action
// only admins may take, 403 a group the account is not in, 404 an unknown
// group; every other refusal is the upstream's.
func groupError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, whatsmeow.ErrIQNotAuthorized), errors.Is(err, whatsmeow.ErrGroupInviteLinkUnauthorized):
		return bridge.ErrNotGroupAdmin
	case errors.Is(err, whatsmeow.ErrIQForbidden), errors.Is(err, whatsmeow.ErrNotInGroup):
		return bridge.ErrNotGroupMember
	case errors.Is(err, whatsmeow.ErrIQNotFound), errors.Is(err, whatsmeow.ErrGroupNotFound):
		return bridge.ErrUnknownGroup
	case errors.Is(err, whatsmeow.ErrInviteLinkRevoked):
		return bridge.ErrInviteRevoked
	case errors.Is(err, whatsmeow.ErrInviteLinkInvalid):
		return bridge.ErrInviteUnknown
	case errors.Is(err, whatsmeow.ErrInvalidImageFormat):
		return bridge.ErrPhotoRefused
	case errors.Is(err, whatsmeow.ErrNotConnected), errors.Is(err, whatsmeow.ErrIQTimedOut):
		return fmt.Errorf("%w: %w", bridge.ErrNotLinked, err)
	}
	var iq *whatsmeow.IQError
	if errors.As(err, &iq) {
		return &bridge.Error{Kind: bridge.ErrGroupRefused.Kind, Code: bridge.ErrGroupRefused.Code,
			Message: fmt.Sprintf("WhatsApp refused the group action (%d %s)", iq.Code, iq.Text), Err: err}
	}
	return err
}

// groupCall runs f with the ready client and the group's JID. The group's
// info read before is forgotten: f may change it.
func (m *Session) groupCall(group bridge.Recipient, f func(*whatsmeow.Client, types.JID) error) error {
	cli, err := m.readyClient()
	if err != nil {
		return err
	}
	jid, err := groupJID(group)
	if err != nil {
		return err
	}
	m.groups.forgetInfo(group.JID())
	return groupError(f(cli, jid))
}

// GroupInfo reads a group the account is in, with its members, from
// WhatsApp; CachedGroupInfo serves the answer for a while.
func (m *Session) GroupInfo(ctx context.Context, group bridge.Recipient) (bridge.GroupInfo, error) {
	var info bridge.GroupInfo
	err := m.groupCall(group, func(cli *whatsmeow.Client, jid types.JID) error {
		g, err := cli.GetGroupInfo(ctx, jid)
		if err == nil {
			info = groupInfoOf(g)
		}
		return err
	})
	if err == nil {
		m.groups.keepInfo(group.JID(), info, m.opts.Now())
	}
	return info, err
}

// CachedGroupInfo is the group as GroupInfo last read it, when that was
// less than groupsCacheFor ago and neither WhatsApp told of a change to
// the account's groups since nor the account acted on this one: a client
// that reads a group again and again asks WhatsApp once.
func (m *Session) CachedGroupInfo(group bridge.Recipient) (bridge.GroupInfo, bool) {
	if !m.Ready() {
		return bridge.GroupInfo{}, false
	}
	return m.groups.freshInfo(group.JID(), m.opts.Now())
}

// CreateGroup creates a group the account owns, with subject and
// participants; those WhatsApp would not add are in the results.
func (m *Session) CreateGroup(ctx context.Context, subject string, participants []bridge.Recipient) (bridge.GroupInfo, []bridge.MemberResult, error) {
	cli, err := m.readyClient()
	if err != nil {
		return bridge.GroupInfo{}, nil, err
	}
	jids, err := participantJIDs(participants)
	if err != nil {
		return bridge.GroupInfo{}, nil, err
	}
	g, err := cli.CreateGroup(ctx, whatsmeow.ReqCreateGroup{Name: subject, Participants: jids})
	if err != nil {
		return bridge.GroupInfo{}, nil, groupError(err)
	}
	m.groups.forget()
	// The answer lists the members, and the refused with their code.
	var answered []types.GroupParticipant
	members := g.Participants[:0:0]
	for _, p := range g.Participants {
		answered = append(answered, p)
		if p.Error == 0 {
			members = append(members, p)
		}
	}
	g.Participants = members
	return groupInfoOf(g), memberResults(participants, jids, answered, bridge.MemberAdd), nil
}

// SetGroupSubject renames a group.
func (m *Session) SetGroupSubject(ctx context.Context, group bridge.Recipient, subject string) error {
	return m.groupCall(group, func(cli *whatsmeow.Client, jid types.JID) error {
		return cli.SetGroupName(ctx, jid, subject)
	})
}

// SetGroupDescription sets a group's description; "" removes it.
func (m *Session) SetGroupDescription(ctx context.Context, group bridge.Recipient, description string) error {
	return m.groupCall(group, func(cli *whatsmeow.Client, jid types.JID) error {
		// SetGroupTopic names the previous description (read from the group),
		// which WhatsApp needs to tell a change from a race of two.
		return cli.SetGroupTopic(ctx, jid, "", "", description)
	})
}

// SetGroupPhoto sets a group's photo (a JPEG); nil removes it. It returns
// the photo's id ("" when removed).
func (m *Session) SetGroupPhoto(ctx context.Context, group bridge.Recipient, jpeg []byte) (string, error) {
	var id string
	err := m.groupCall(group, func(cli *whatsmeow.Client, jid types.JID) error {
		got, err := cli.SetGroupPhoto(ctx, jid, jpeg)
		if jpeg != nil {
			id = got
		}
		return err
	})
	return id, err
}

// ChangeMembers adds, removes, promotes or demotes participants: a result
// for each.
func (m *Session) ChangeMembers(ctx context.Context, group bridge.Recipient, action bridge.MemberAction, participants []bridge.Recipient) ([]bridge.MemberResult, error) {
	jids, err := participantJIDs(participants)
	if err != nil {
		return nil, err
	}
	var results []bridge.MemberResult
	err = m.groupCall(group, func(cli *whatsmeow.Client, jid types.JID) error {
		answered, err := cli.UpdateGroupParticipants(ctx, jid, jids, whatsmeow.ParticipantChange(action))
		results = memberResults(participants, jids, answered, action)
		return err
	})
	return results, err
}

// InviteLink reads a group's invite link; reset revokes it and returns its
// replacement.
func (m *Session) InviteLink(ctx context.Context, group bridge.Recipient, reset bool) (string, error) {
	var link string
	err := m.groupCall(group, func(cli *whatsmeow.Client, jid types.JID) error {
		var err error
		link, err = cli.GetGroupInviteLink(ctx, jid, reset)
		return err
	})
	return link, err
}

// JoinGroup joins the group of an invite code and returns it.
func (m *Session) JoinGroup(ctx context.Context, code string) (bridge.Recipient, error) {
	cli, err := m.readyClient()
	if err != nil {
		return bridge.Recipient{}, err
	}
	jid, err := cli.JoinGroupWithLink(ctx, code)
	if err != nil {
		return bridge.Recipient{}, groupError(err)
	}
	m.groups.forget()
	return bridge.RecipientFromJID(jid.String())
}

// LeaveGroup leaves a group.
func (m *Session) LeaveGroup(ctx context.Context, group bridge.Recipient) error {
	err := m.groupCall(group, func(cli *whatsmeow.Client, jid types.JID) error {
		return cli.LeaveGroup(ctx, jid)
	})
	if err == nil {
		m.groups.forget()
	}
	return err
}

// forget drops the cached list of the account's groups and the groups read
// one by one: they changed (the account created, joined or left one, or
// WhatsApp told of a change).
func (g *groupList) forget() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.groups, g.infos = nil, nil
}

// participantJIDs are the people of a group action as whatsmeow names them.
func participantJIDs(ps []bridge.Recipient) ([]types.JID, error) {
	out := make([]types.JID, len(ps))
	for i, p := range ps {
		jid, err := types.ParseJID(p.JID())
		if err != nil || p.Kind == bridge.RecipientGroup {
			return nil, bridge.ErrInvalidRecipient
		}
		out[i] = jid
	}
	return out, nil
}

// memberResults pairs what WhatsApp answered with who was asked for: by
// the JID it echoed (either address), in the request's order; someone it
// did not mention is refused.
func memberResults(asked []bridge.Recipient, jids []types.JID, answered []types.GroupParticipant, action bridge.MemberAction) []bridge.MemberResult {
	out := make([]bridge.MemberResult, len(asked))
	for i := range asked {
		out[i] = bridge.MemberResult{Participant: asked[i], Outcome: bridge.MemberRefused}
		for _, p := range answered {
			if p.JID != jids[i] && p.PhoneNumber != jids[i] && p.LID != jids[i] {
				continue
			}
			member := memberOf(p)
			out[i].Phone, out[i].LID = member.Phone, member.LID
			out[i].Outcome = participantOutcome(p.Error, action)
		}
	}
	return out
}

// participantOutcome reads WhatsApp's code for one participant of an
// action (0: done).
func participantOutcome(code int, action bridge.MemberAction) string {
	switch code {
	case 0, 200:
		return bridge.MemberDone
	case 403:
		return bridge.MemberPrivacyRefused
	case 404:
		if action == bridge.MemberAdd {
			return bridge.MemberNotOnWhatsApp
		}
		return bridge.MemberNotInGroup
	case 406:
		return bridge.MemberNotAllowed
	case 409:
		return bridge.MemberAlreadyIn
	}
	return bridge.MemberRefused
}

func memberOf(p types.GroupParticipant) bridge.GroupMember {
	g := bridge.GroupMember{Admin: p.IsAdmin, SuperAdmin: p.IsSuperAdmin}
	if !p.PhoneNumber.IsEmpty() {
		g.Phone = p.PhoneNumber.User
	}
	if !p.LID.IsEmpty() {
		g.LID = p.LID.ToNonAD().String()
	}
	return g
}

func groupInfoOf(g *types.GroupInfo) bridge.GroupInfo {
	info := bridge.GroupInfo{ID: g.JID.String(), Subject: g.Name, Description: g.Topic, Created: g.GroupCreated,
		Announce: g.IsAnnounce, Locked: g.IsLocked, Members: make([]bridge.GroupMember, 0, len(g.Participants))}
	switch {
	case !g.OwnerPN.IsEmpty():
		info.Owner = g.OwnerPN.User
	case g.OwnerJID.Server == types.DefaultUserServer:
		info.Owner = g.OwnerJID.User
	case !g.OwnerJID.IsEmpty():
		info.Owner = g.OwnerJID.ToNonAD().String()
	}
	for _, p := range g.Participants {
		info.Members = append(info.Members, memberOf(p))
	}
	return info
}
