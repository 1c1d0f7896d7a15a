package messaging

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// The group endpoints (API key): a read is answered from memory or paced;
// every change is a paced, audited group action that takes an
// Idempotency-Key.

type groupMemberJSON struct {
	Phone      *string `json:"phone"`
	LID        *string `json:"lid"`
	Admin      bool    `json:"admin"`
	SuperAdmin bool    `json:"super_admin"`
}

type groupInfoJSON struct {
	ID           string            `json:"id"`
	Subject      string            `json:"subject"`
	Description  string            `json:"description"`
	Owner        *string           `json:"owner"`
	Created      string            `json:"created"`
	Announce     bool              `json:"announce"`
	Locked       bool              `json:"locked"`
	Participants []groupMemberJSON `json:"participants"`
}

type memberResultJSON struct {
	Participant string  `json:"participant"`
	Outcome     string  `json:"outcome"`
	Phone       *string `json:"phone"`
	LID         *string `json:"lid"`
}

func groupInfoOf(g bridge.GroupInfo) groupInfoJSON {
	out := groupInfoJSON{ID: g.ID, Subject: g.Subject, Description: g.Description, Owner: optionalString(g.Owner),
		Created: bridge.FormatTime(g.Created), Announce: g.Announce, Locked: g.Locked, Participants: make([]groupMemberJSON, 0, len(g.Members))}
	for _, m := range g.Members {
		out.Participants = append(out.Participants, groupMemberJSON{Phone: optionalString(m.Phone), LID: optionalString(m.LID),
			Admin: m.Admin, SuperAdmin: m.SuperAdmin})
	}
	return out
}

func memberResultsOf(rs []bridge.MemberResult) []memberResultJSON {
	out := make([]memberResultJSON, 0, len(rs))
	for _, r := range rs {
		out = append(out, memberResultJSON{Participant: r.Participant.String(), Outcome: r.Outcome,
			Phone: optionalString(r.Phone), LID: optionalString(r.LID)})
	}
	return out
}

// getGroup is GET /api/groups/{jid}: the group with its participants. A
// group read lately and unchanged since is answered from memory; asking
// WhatsApp again spends a turn of the group actions' pace, so that a
// client polling many groups does not make the account look like a
// machine.
func (s *server) getGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := parseGroup(r)
	if err != nil {
		return err
	}
	info, ok := s.Groups.Admin.CachedGroupInfo(g)
	if !ok {
		if err := s.Groups.Actions.Pace.Admit(r.Context(), 1); err != nil {
			return withRetryAfter(w, err)
		}
		if info, err = s.Groups.Admin.GroupInfo(r.Context(), g); err != nil {
			return httpkit.SessionError(err)
		}
	}
	return httpkit.WriteJSON(w, http.StatusOK, groupInfoOf(info))
}

type createGroupBody struct {
	Subject      *string  `json:"subject"`
	Participants []string `json:"participants"`
}

// createGroup is POST /api/groups {subject, participants}: a group the
// account owns; 201 with the group and what became of each participant.
func (s *server) createGroup(w http.ResponseWriter, r *http.Request) error {
	var body createGroupBody
	raw, err := readGroupJSON(w, r, &body)
	if err != nil {
		return err
	}
	if body.Subject == nil {
		return bridge.Invalid(bridge.CodeMissingSubject, `the body needs "subject", the group's name`)
	}
	subject, err := bridge.ParseGroupSubject(*body.Subject)
	if err != nil {
		return err
	}
	ps, err := bridge.ParseParticipants(body.Participants)
	if err != nil {
		return err
	}
	return s.doGroupAction(w, r, raw, groupAction{audit: audit.ActionGroupCreate, detail: fmt.Sprintf("%d participants", len(ps)), cost: len(ps),
		run: func(ctx context.Context) (int, any, error) {
			info, results, err := s.Groups.Admin.CreateGroup(ctx, subject, ps)
			return http.StatusCreated, map[string]any{"group": groupInfoOf(info), "participants": memberResultsOf(results)}, err
		}})
}

type updateGroupBody struct {
	Subject     *string `json:"subject"`
	Description *string `json:"description"`
}

// updateGroup is PATCH /api/groups/{jid} {subject?, description?}: 204.
func (s *server) updateGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := parseGroup(r)
	if err != nil {
		return err
	}
	var body updateGroupBody
	raw, err := readGroupJSON(w, r, &body)
	if err != nil {
		return err
	}
	if body.Subject == nil && body.Description == nil {
		return bridge.Invalid(bridge.CodeMissingChange, `the body needs "subject", "description" or both`)
	}
	var subject, description string
	if body.Subject != nil {
		if subject, err = bridge.ParseGroupSubject(*body.Subject); err != nil {
			return err
		}
	}
	if body.Description != nil {
		if description, err = bridge.ParseGroupDescription(*body.Description); err != nil {
			return err
		}
	}
	return s.doGroupAction(w, r, raw, groupAction{audit: audit.ActionGroupUpdate, detail: g.JID(), cost: 1,
		run: func(ctx context.Context) (int, any, error) {
			if body.Subject != nil {
				if err := s.Groups.Admin.SetGroupSubject(ctx, g, subject); err != nil {
					return 0, nil, err
				}
			}
			if body.Description != nil {
				return http.StatusNoContent, nil, s.Groups.Admin.SetGroupDescription(ctx, g, description)
			}
			return http.StatusNoContent, nil, nil
		}})
}

// setGroupPhoto is PUT /api/groups/{jid}/photo with a JPEG body (at most
// 1 MiB): 200 {photo_id}.
func (s *server) setGroupPhoto(w http.ResponseWriter, r *http.Request) error {
	g, err := parseGroup(r)
	if err != nil {
		return err
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "image/jpeg" {
		return bridge.Errorf(bridge.KindUnsupported, bridge.CodeUnsupportedMediaType, "the photo must be sent as image/jpeg")
	}
	jpeg, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxGroupPhoto))
	if err != nil {
		return bridge.Errorf(bridge.KindTooLarge, bridge.CodeBodyTooLarge, "the photo must be at most %d bytes", maxGroupPhoto)
	}
	if len(jpeg) < 4 || jpeg[0] != 0xff || jpeg[1] != 0xd8 || jpeg[2] != 0xff {
		return bridge.Invalid(bridge.CodeInvalidPhoto, "the body is not a JPEG image")
	}
	return s.doGroupAction(w, r, jpeg, groupAction{audit: audit.ActionGroupPhoto, detail: g.JID() + " set", cost: 1,
		run: func(ctx context.Context) (int, any, error) {
			id, err := s.Groups.Admin.SetGroupPhoto(ctx, g, jpeg)
			return http.StatusOK, map[string]string{"photo_id": id}, err
		}})
}

// deleteGroupPhoto is DELETE /api/groups/{jid}/photo: 204.
func (s *server) deleteGroupPhoto(w http.ResponseWriter, r *http.Request) error {
	g, err := parseGroup(r)
	if err != nil {
		return err
	}
	return s.doGroupAction(w, r, nil, groupAction{audit: audit.ActionGroupPhoto, detail: g.JID() + " removed", cost: 1,
		run: func(ctx context.Context) (int, any, error) {
			_, err := s.Groups.Admin.SetGroupPhoto(ctx, g, nil)
			return http.StatusNoContent, nil, err
		}})
}

type membersBody struct {
	Action       *string  `json:"action"`
	Participants []string `json:"participants"`
}

// changeMembers is POST /api/groups/{jid}/participants {action,
// participants}: 200 with what became of each participant.
func (s *server) changeMembers(w http.ResponseWriter, r *http.Request) error {
	g, err := parseGroup(r)
	if err != nil {
		return err
	}
	var body membersBody
	raw, err := readGroupJSON(w, r, &body)
	if err != nil {
		return err
	}
	if body.Action == nil {
		return bridge.Invalid(bridge.CodeMissingAction, `the body needs "action": add, remove, promote or demote`)
	}
	action, err := bridge.ParseMemberAction(*body.Action)
	if err != nil {
		return err
	}
	ps, err := bridge.ParseParticipants(body.Participants)
	if err != nil {
		return err
	}
	return s.doGroupAction(w, r, raw, groupAction{audit: audit.ActionGroupMembers,
		detail: fmt.Sprintf("%s %s %d", g.JID(), action, len(ps)), cost: len(ps),
		run: func(ctx context.Context) (int, any, error) {
			results, err := s.Groups.Admin.ChangeMembers(ctx, g, action, ps)
			return http.StatusOK, map[string]any{"participants": memberResultsOf(results)}, err
		}})
}

// getInviteLink is GET /api/groups/{jid}/invite-link (admins only).
func (s *server) getInviteLink(w http.ResponseWriter, r *http.Request) error {
	g, err := parseGroup(r)
	if err != nil {
		return err
	}
	link, err := s.Groups.Admin.InviteLink(r.Context(), g, false)
	if err != nil {
		return httpkit.SessionError(err)
	}
	return httpkit.WriteJSON(w, http.StatusOK, map[string]string{"link": link})
}

// revokeInviteLink is DELETE /api/groups/{jid}/invite-link: the link stops
// working; 200 with its replacement.
func (s *server) revokeInviteLink(w http.ResponseWriter, r *http.Request) error {
	g, err := parseGroup(r)
	if err != nil {
		return err
	}
	return s.doGroupAction(w, r, nil, groupAction{audit: audit.ActionGroupInvite, detail: g.JID() + " revoked", cost: 1,
		run: func(ctx context.Context) (int, any, error) {
			link, err := s.Groups.Admin.InviteLink(ctx, g, true)
			return http.StatusOK, map[string]string{"link": link}, err
		}})
}

type joinBody struct {
	Link *string `json:"link"`
}

// joinGroup is POST /api/groups/join {link}: 200 {group}.
func (s *server) joinGroup(w http.ResponseWriter, r *http.Request) error {
	var body joinBody
	raw, err := readGroupJSON(w, r, &body)
	if err != nil {
		return err
	}
	if body.Link == nil {
		return bridge.Invalid(bridge.CodeMissingLink, `the body needs "link", https://chat.whatsapp.com/<code>`)
	}
	code, err := bridge.ParseInviteLink(*body.Link)
	if err != nil {
		return err
	}
	return s.doGroupAction(w, r, raw, groupAction{audit: audit.ActionGroupJoin, cost: 1,
		run: func(ctx context.Context) (int, any, error) {
			g, err := s.Groups.Admin.JoinGroup(ctx, code)
			return http.StatusOK, map[string]string{"group": g.JID()}, err
		}})
}

// leaveGroup is POST /api/groups/{jid}/leave: 204.
func (s *server) leaveGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := parseGroup(r)
	if err != nil {
		return err
	}
	return s.doGroupAction(w, r, nil, groupAction{audit: audit.ActionGroupLeave, detail: g.JID(), cost: 1,
		run: func(ctx context.Context) (int, any, error) {
			return http.StatusNoContent, nil, s.Groups.Admin.LeaveGroup(ctx, g)
		}})
}
