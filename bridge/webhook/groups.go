package webhook

import (
	"github.com/msgbridge/msgbridge/bridge"
)

// The events of groups.
const (
	TypeGroupParticipants = "group.participants"
	TypeGroupUpdate       = "group.update"
)

type groupMemberPayload struct {
	Phone *string `json:"phone"`
	LID   *string `json:"lid"`
}

type groupParticipantsPayload struct {
	Event        string               `json:"event"`
	Group        string               `json:"group"`
	Action       string               `json:"action"`
	Participants []groupMemberPayload `json:"participants"`
	By           *string              `json:"by"`
	Reason       string               `json:"reason,omitempty"`
	Timestamp    string               `json:"timestamp"`
}

type groupUpdatePayload struct {
	Event           string  `json:"event"`
	Group           string  `json:"group"`
	By              *string `json:"by"`
	Timestamp       string  `json:"timestamp"`
	Subject         *string `json:"subject,omitempty"`
	Description     *string `json:"description,omitempty"`
	Announce        *bool   `json:"announce,omitempty"`
	Locked          *bool   `json:"locked,omitempty"`
	Photo           string  `json:"photo,omitempty"`
	InviteLinkReset bool    `json:"invite_link_reset,omitempty"`
}

// GroupEvents are the events of a group change: group.participants for a
// member change (a group the account was added to at its creation is an
// add with reason "create"), group.update for a change of its info (the
// new group's subject too). Events of one group are delivered in order.
func GroupEvents(c bridge.GroupChange) []Event {
	key := "group:" + c.Group.JID()
	at := bridge.FormatTime(c.At)
	by := optionalRecipient(c.By)
	var out []Event
	if c.MemberAction != "" {
		p := groupParticipantsPayload{Event: TypeGroupParticipants, Group: c.Group.JID(), Action: string(c.MemberAction),
			Participants: make([]groupMemberPayload, 0, len(c.Members)), By: by, Reason: c.Reason, Timestamp: at}
		if c.Created {
			p.Reason = "create"
		}
		for _, m := range c.Members {
			p.Participants = append(p.Participants, groupMemberPayload{Phone: optionalText(m.Phone), LID: optionalText(m.LID)})
		}
		out = append(out, Event{Type: TypeGroupParticipants, Key: key, Payload: p})
	}
	if c.Subject != nil || c.Description != nil || c.Announce != nil || c.Locked != nil || c.Photo != "" || c.InviteReset {
		out = append(out, Event{Type: TypeGroupUpdate, Key: key, Payload: groupUpdatePayload{
			Event: TypeGroupUpdate, Group: c.Group.JID(), By: by, Timestamp: at, Subject: c.Subject, Description: c.Description,
			Announce: c.Announce, Locked: c.Locked, Photo: c.Photo, InviteLinkReset: c.InviteReset}})
	}
	return out
}

func optionalText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
