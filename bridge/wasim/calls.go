package wasim

import (
	"net/http"
	"slices"
	"strings"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Calls, as WhatsApp signals them to linked devices (whatsmeow's call.go
// reads them): the caller's offer, then how the call ends.
//
//	<call from id t platform version><offer call-id call-creator><audio/>|<video/></offer></call>
//	<call from id t><terminate call-id call-creator reason/></call>
//	<call from id t><accept call-id call-creator/></call>   (answered on the account's phone)
//
// A linked device that rejects a call sends
//
//	<call id from to><reject call-id call-creator count="0"/></call>
//
// which ends it on the caller's phone (Rejects lists them) and on the
// account's other devices.

// CallEnd is how a call ended, as Ended lists them.
type CallEnd struct {
	CallID string
	By     types.JID // who rejected it, for a reject
	Reason string    // "rejected", or the terminate's reason
}

// callBook is what the simulator's phones saw of calls; guarded by s.mu.
type callBook struct {
	ended map[*User][]CallEnd
}

// Call rings the account of callee from the user's phone: callee's linked
// devices get the offer. It returns the call's id.
func (u *User) Call(callee *User, video bool) string {
	id := strings.TrimPrefix(newMessageID(), "3A")
	media := "audio"
	if video {
		media = "video"
	}
	u.sendCall(callee, waBinary.Node{Tag: "offer", Attrs: waBinary.Attrs{"call-id": id, "call-creator": u.jid, "caller_lid": u.lid},
		Content: []waBinary.Node{{Tag: media, Attrs: waBinary.Attrs{"enc": "opus", "rate": "16000"}}}}, true)
	return id
}

// HangUp ends a call the user made before anyone answered it: callee's
// linked devices get a terminate (the call was missed).
func (u *User) HangUp(callee *User, callID string) {
	u.sendCall(callee, waBinary.Node{Tag: "terminate", Attrs: waBinary.Attrs{"call-id": callID, "call-creator": u.jid, "reason": "timeout"}}, false)
}

// AnswerOnPhone is the callee's phone answering a call made to it: its
// linked devices hear that another device accepted it.
func (u *User) AnswerOnPhone(caller *User, callID string) {
	u.sendCall(u, waBinary.Node{Tag: "accept", Attrs: waBinary.Attrs{"call-id": callID, "call-creator": caller.jid}}, false)
}

// sendCall sends a call node from the user's phone to the linked devices of
// to.
func (u *User) sendCall(to *User, child waBinary.Node, offer bool) {
	attrs := waBinary.Attrs{"from": u.jid, "id": randomBase64(9), "t": time.Now().Unix()}
	if offer {
		attrs["platform"], attrs["version"] = "android", "2.26.1.0"
	}
	n := waBinary.Node{Tag: "call", Attrs: attrs, Content: []waBinary.Node{child}}
	for _, comp := range u.sim.companionsOf(to) {
		u.sim.deliver(to, comp, n)
	}
}

// Ended lists the calls of the user's phone that ended, oldest first.
func (u *User) Ended() []CallEnd {
	u.sim.mu.Lock()
	defer u.sim.mu.Unlock()
	return slices.Clone(u.sim.calls.ended[u])
}

// handleClientCall reads a linked device's call node: a reject ends the
// call on the caller's phone.
func (s *Simulator) handleClientCall(c *conn, n *waBinary.Node) {
	reject, ok := n.GetOptionalChildByTag("reject")
	if !ok {
		return
	}
	callID, _ := reject.Attrs["call-id"].(string)
	creator, _ := reject.Attrs["call-creator"].(types.JID)
	s.mu.Lock()
	defer s.mu.Unlock()
	caller := s.userByJIDLocked(creator.ToNonAD())
	if caller == nil || callID == "" {
		return
	}
	if s.calls.ended == nil {
		s.calls.ended = map[*User][]CallEnd{}
	}
	s.calls.ended[caller] = append(s.calls.ended[caller], CallEnd{CallID: callID, By: c.user.jid, Reason: "rejected"})
}

// apiCall answers POST /v1/users/{number}/calls {to, video?, action?}:
// action "offer" (the default) rings to's account and answers {call_id};
// "hangup" and "answer_on_phone" take call_id.
func (s *Simulator) apiCall(w http.ResponseWriter, r *http.Request, u *User) {
	var req struct {
		To     string `json:"to"`
		Video  bool   `json:"video"`
		Action string `json:"action"`
		CallID string `json:"call_id"`
	}
	if err := readJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	s.mu.Lock()
	other := s.users[normalizeNumber(req.To)]
	s.mu.Unlock()
	if other == nil {
		writeError(w, &apiError{http.StatusNotFound, "not_found", "no user " + req.To})
		return
	}
	switch req.Action {
	case "", "offer":
		writeJSON(w, http.StatusOK, map[string]string{"call_id": u.Call(other, req.Video)})
	case "hangup":
		u.HangUp(other, req.CallID)
		writeJSON(w, http.StatusOK, map[string]string{"call_id": req.CallID})
	case "answer_on_phone":
		u.AnswerOnPhone(other, req.CallID)
		writeJSON(w, http.StatusOK, map[string]string{"call_id": req.CallID})
	default:
		writeError(w, badRequest("action must be offer, hangup or answer_on_phone"))
	}
}
