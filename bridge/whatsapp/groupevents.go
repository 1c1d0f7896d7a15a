package whatsapp

import (
	"database/sql"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
)

// groupEvent puts a group notification into the outbox, each change in a
// transaction of its own, before the notification is acked; false (no ack:
// WhatsApp delivers it again) when one could not be stored. Without a
// subscription it is acknowledged and dropped.
func (m *Session) groupEvent(raw any) bool {
	m.groups.forget() // names, sizes or membership changed
	if m.opts.Outbox == nil || !m.opts.Outbox.Enabled() {
		return true
	}
	for _, c := range groupChanges(raw) {
		err := m.states.inTx(m.bgCtx, func(tx *sql.Tx) error { return m.opts.Outbox.GroupChanged(m.bgCtx, tx, c) })
		if err != nil {
			m.log.Error(err, "store group change; WhatsApp will deliver it again", "group", c.Group.JID())
			return false
		}
	}
	return true
}

// groupChanges reads whatsmeow's group events: a member change per kind,
// and one change of the info; nothing for a picture of someone else.
func groupChanges(raw any) []bridge.GroupChange {
	switch e := raw.(type) {
	case *events.GroupInfo:
		return groupInfoChanges(e)
	case *events.JoinedGroup:
		group, err := bridge.RecipientFromJID(e.JID.String())
		if err != nil {
			return nil
		}
		c := bridge.GroupChange{Group: group, By: changedBy(e.Sender, e.SenderPN), At: e.GroupCreated, Created: true,
			Subject: &e.Name, Reason: e.Reason}
		c.MemberAction = bridge.MemberAdd
		c.Members = groupInfoOf(&e.GroupInfo).Members
		return []bridge.GroupChange{c}
	case *events.Picture:
		group, err := bridge.RecipientFromJID(e.JID.String())
		if err != nil || group.Kind != bridge.RecipientGroup {
			return nil
		}
		c := bridge.GroupChange{Group: group, By: changedBy(&e.Author, nil), At: e.Timestamp, Photo: "set"}
		if e.Remove {
			c.Photo = "removed"
		}
		return []bridge.GroupChange{c}
	}
	return nil
}

func groupInfoChanges(e *events.GroupInfo) []bridge.GroupChange {
	group, err := bridge.RecipientFromJID(e.JID.String())
	if err != nil {
		return nil
	}
	base := bridge.GroupChange{Group: group, By: changedBy(e.Sender, e.SenderPN), At: e.Timestamp}
	var out []bridge.GroupChange
	for _, members := range []struct {
		action bridge.MemberAction
		jids   []types.JID
	}{{bridge.MemberAdd, e.Join}, {bridge.MemberRemove, e.Leave}, {bridge.MemberPromote, e.Promote}, {bridge.MemberDemote, e.Demote}} {
		if len(members.jids) == 0 {
			continue
		}
		c := base
		c.MemberAction, c.Reason = members.action, e.JoinReason
		for _, jid := range members.jids {
			c.Members = append(c.Members, memberOf(types.GroupParticipant{JID: jid, PhoneNumber: phoneOf(jid), LID: lidOf(jid)}))
		}
		out = append(out, c)
	}
	info := base
	changed := false
	if e.Name != nil {
		info.Subject, changed = &e.Name.Name, true
	}
	if e.Topic != nil {
		info.Description, changed = &e.Topic.Topic, true
	}
	if e.Announce != nil {
		info.Announce, changed = &e.Announce.IsAnnounce, true
	}
	if e.Locked != nil {
		info.Locked, changed = &e.Locked.IsLocked, true
	}
	if e.NewInviteLink != nil {
		info.InviteReset, changed = true, true
	}
	if changed {
		out = append(out, info)
	}
	return out
}

// changedBy names who made a change: the phone number when WhatsApp gave
// it, else the JID it gave; zero when none.
func changedBy(jid, pn *types.JID) bridge.Recipient {
	for _, j := range []*types.JID{pn, jid} {
		if j != nil && !j.IsEmpty() {
			if r, err := bridge.RecipientFromJID(j.ToNonAD().String()); err == nil {
				return r
			}
		}
	}
	return bridge.Recipient{}
}

func phoneOf(jid types.JID) types.JID {
	if jid.Server == types.DefaultUserServer {
		return jid
	}
	return types.EmptyJID
}

func lidOf(jid types.JID) types.JID {
	if jid.Server == types.HiddenUserServer {
		return jid
	}
	return types.EmptyJID
}
