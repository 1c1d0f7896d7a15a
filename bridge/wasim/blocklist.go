package wasim

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Block lists, as WhatsApp keeps them for an account and its linked devices
// (whatsmeow's user.go and notification.go read them):
//
//	<iq xmlns="blocklist" type="get"/>                        -> <list dhash><item jid=LID/>…</list>
//	<iq xmlns="blocklist" type="set"><item jid action pn_jid/></iq> -> the same list, changed
//	<notification type="account_sync"><blocklist dhash prev_dhash><item jid action/></blocklist></notification>
//
// The notification tells the account's devices what another device (the
// phone, or another companion) changed. Current WhatsApp names blocked
// users by their LIDs.

// blockBook is every user's block list, oldest first; guarded by s.mu.
type blockBook struct {
	lists map[*User][]*User
}

// Blocked lists the users u blocked, oldest first.
func (u *User) Blocked() []*User {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	return slices.Clone(u.sim.blocks.lists[u])
}

// Blocks reports whether u blocked other.
func (u *User) Blocks(other *User) bool {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	return slices.Contains(u.sim.blocks.lists[u], other)
}

// SetBlocked is u's phone blocking (or unblocking) other: u's linked
// devices hear it by an account_sync notification. It reports whether the
// list changed.
func (u *User) SetBlocked(other *User, blocked bool) bool {
	prev, changed := u.sim.setBlocked(u, other, blocked)
	if changed {
		u.sim.notifyBlocklist(u, nil, other, blocked, prev)
	}
	return changed
}

// setBlocked changes u's list; it returns the list's hash before.
func (s *Simulator) setBlocked(u, other *User, blocked bool) (prevHash string, changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.blocks.lists == nil {
		s.blocks.lists = map[*User][]*User{}
	}
	list := s.blocks.lists[u]
	prevHash = blocklistHash(list)
	has := slices.Contains(list, other)
	switch {
	case blocked && !has:
		s.blocks.lists[u] = append(list, other)
	case !blocked && has:
		s.blocks.lists[u] = slices.DeleteFunc(slices.Clone(list), func(x *User) bool { return x == other })
	default:
		return prevHash, false
	}
	return prevHash, true
}

// notifyBlocklist tells u's linked devices, but the one that made the
// change (except), that other was blocked or unblocked.
func (s *Simulator) notifyBlocklist(u *User, except *companion, other *User, blocked bool, prevHash string) {
	action := "unblock"
	if blocked {
		action = "block"
	}
	s.mu.Lock()
	hash := blocklistHash(s.blocks.lists[u])
	s.mu.Unlock()
	note := waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
		"from": u.jid, "type": "account_sync", "id": randomBase64(9), "t": time.Now().Unix(),
	}, Content: []waBinary.Node{{Tag: "blocklist", Attrs: waBinary.Attrs{"dhash": hash, "prev_dhash": prevHash},
		Content: []waBinary.Node{{Tag: "item", Attrs: waBinary.Attrs{"jid": other.lid, "action": action}}}}}}
	for _, comp := range s.companionsOf(u) {
		if comp != except {
			s.deliver(u, comp, note)
		}
	}
}

// answerBlocklist answers a linked device's blocklist query or change.
func (s *Simulator) answerBlocklist(c *conn, iq *waBinary.Node) ([]waBinary.Node, *iqError) {
	if iq.Attrs["type"] == "set" {
		item, ok := iq.GetOptionalChildByTag("item")
		if !ok {
			return nil, errBadRequest
		}
		jid, _ := item.Attrs["jid"].(types.JID)
		action, _ := item.Attrs["action"].(string)
		s.mu.Lock()
		other := s.userByJIDLocked(jid.ToNonAD())
		comp := c.user.companions[c.device.Device]
		s.mu.Unlock()
		if other == nil || (action != "block" && action != "unblock") {
			return nil, errBadRequest
		}
		if prev, changed := s.setBlocked(c.user, other, action == "block"); changed {
			s.notifyBlocklist(c.user, comp, other, action == "block", prev)
		}
	}
	s.mu.Lock()
	list := s.blocks.lists[c.user]
	items := make([]waBinary.Node, 0, len(list))
	for _, b := range list {
		items = append(items, waBinary.Node{Tag: "item", Attrs: waBinary.Attrs{"jid": b.lid}})
	}
	hash := blocklistHash(list)
	s.mu.Unlock()
	return []waBinary.Node{{Tag: "list", Attrs: waBinary.Attrs{"dhash": hash}, Content: items}}, nil
}

// blocklistHash stands in for WhatsApp's dhash of a list: it changes with
// the list.
func blocklistHash(list []*User) string {
	ids := make([]string, len(list))
	for i, u := range list {
		ids[i] = u.lid.User
	}
	slices.Sort(ids)
	sum := sha256.Sum256([]byte(strings.Join(ids, ",")))
	return hex.EncodeToString(sum[:8])
}

// apiBlocks answers GET /v1/users/{number}/blocks (the numbers the user
// blocked) and POST {contact, blocked} (the user's phone blocks or
// unblocks a contact; its linked devices hear it).
func (s *Simulator) apiBlocks(w http.ResponseWriter, r *http.Request, u *User) {
	if r.Method == http.MethodPost {
		var req struct {
			Contact string `json:"contact"`
			Blocked *bool  `json:"blocked"`
		}
		if err := readJSON(r, &req); err != nil {
			writeError(w, err)
			return
		}
		other, ok := s.LookupUser(req.Contact)
		if !ok || req.Blocked == nil {
			writeError(w, badRequest("contact must name a user of the simulator, and blocked be true or false"))
			return
		}
		changed := u.SetBlocked(other, *req.Blocked)
		writeJSON(w, http.StatusOK, map[string]bool{"changed": changed})
		return
	}
	numbers := []string{}
	for _, b := range u.Blocked() {
		numbers = append(numbers, b.Number())
	}
	writeJSON(w, http.StatusOK, map[string][]string{"blocked": numbers})
}
