package wasim

import (
	"net/http"
	"slices"

	"go.mau.fi/whatsmeow/types"
)

// The control API of group administration by the simulated phones, for
// tests in other processes and `make demo`: a member's phone changes the
// members or the subject (its group's linked devices get the w:gp2
// notification), and a user refuses to be added to groups.

var memberActions = []string{"add", "remove", "promote", "demote"}

// withGroup resolves {jid} to a group.
func (s *Simulator) withGroup(h func(http.ResponseWriter, *http.Request, *Group)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		jid, err := types.ParseJID(r.PathValue("jid"))
		g, ok := s.LookupGroup(jid)
		if err != nil || !ok {
			writeError(w, &apiError{http.StatusNotFound, "not_found", "no group " + r.PathValue("jid")})
			return
		}
		h(w, r, g)
	}
}

// apiGroupMembers: POST /v1/groups/{jid}/members {by, action, members[]}:
// the admin by changes the members; the answer is the code per member (0:
// done), as WhatsApp answered the phone.
func (s *Simulator) apiGroupMembers(w http.ResponseWriter, r *http.Request, g *Group) {
	var req struct {
		By      string   `json:"by"`
		Action  string   `json:"action"`
		Members []string `json:"members"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	by, ok := s.LookupUser(req.By)
	switch {
	case !ok || !g.IsAdmin(by):
		writeError(w, &apiError{http.StatusConflict, "conflict", "by must be an admin of the group"})
		return
	case !slices.Contains(memberActions, req.Action) || len(req.Members) == 0:
		writeError(w, badRequest("action must be add, remove, promote or demote, with members"))
		return
	}
	members, err := s.usersForNumbers(req.Members)
	if err != nil {
		writeError(w, badRequest("%v", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string][]int{"codes": g.ChangeMembers(by, req.Action, members...)})
}

// apiGroupSubject: POST /v1/groups/{jid}/subject {by, subject}: a member
// renames the group.
func (s *Simulator) apiGroupSubject(w http.ResponseWriter, r *http.Request, g *Group) {
	var req struct {
		By      string `json:"by"`
		Subject string `json:"subject"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	by, ok := s.LookupUser(req.By)
	if !ok || !g.hasMember(by) || req.Subject == "" {
		writeError(w, badRequest("by must be a member, and subject not empty"))
		return
	}
	g.SetSubject(by, req.Subject)
	writeJSON(w, http.StatusOK, g.toJSON())
}

// apiGroupPrivacy: POST /v1/users/{number}/group-privacy {refuse_adds}.
func (s *Simulator) apiGroupPrivacy(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		RefuseAdds bool `json:"refuse_adds"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	u.RefuseGroupAdds(req.RefuseAdds)
	writeJSON(w, http.StatusOK, req)
}
