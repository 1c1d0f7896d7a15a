package wasim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// WhatsApp's answers to an account that sends like a machine (issue 16),
// and what tests need to see pacing and typing.

// Error codes of a refused <message> ack.
const (
	// ackRateOverLimit: rate-overlimit, too many messages in a short time.
	ackRateOverLimit = 429
	// ackReachoutLocked: the reach-out time lock; the account may not start
	// conversations until it ends.
	ackReachoutLocked = 463
)

// RateOverLimit refuses the next n messages of the user's clients with
// <ack class="message" error="429"/> (rate-overlimit); whatsmeow's
// SendMessage returns ErrServerReturnedError ("server returned error
// 429"). It is FailSends with WhatsApp's code for it.
func (u *User) RateOverLimit(n int) { u.FailSends(n, FailAck, ackRateOverLimit) }

// ReachoutLock imposes the reach-out time lock until the given time: the
// connected clients get WhatsApp's announcement, a mex notification
//
//	<notification type="mex" from="s.whatsapp.net"><update op_name=…>
//	  {"data":{"xwa2_notify_account_reachout_timelock":{"is_active":true,
//	  "time_enforcement_ends":"<unix seconds>","enforcement_type":"DEFAULT"}}}</update></notification>
//
// and until then every message they send is refused with
// <ack class="message" error="463"/>. The lock ends by itself at that time
// (WhatsApp sends nothing then); LiftReachoutLock ends it early and
// announces that. It returns how many clients were told.
func (u *User) ReachoutLock(until time.Time) int {
	u.sim.mu.Lock()
	u.faults.reachoutUntil = until
	u.sim.mu.Unlock()
	return u.announceReachout(true, until)
}

// LiftReachoutLock ends the reach-out lock and announces it
// (is_active false).
func (u *User) LiftReachoutLock() int {
	u.sim.mu.Lock()
	u.faults.reachoutUntil = time.Time{}
	u.sim.mu.Unlock()
	return u.announceReachout(false, time.Time{})
}

// reachoutLocked reports whether the user's sends are refused now.
func (s *Simulator) reachoutLocked(u *User) bool {
	if u == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Now().Before(u.faults.reachoutUntil)
}

func (u *User) announceReachout(active bool, until time.Time) int {
	lock := map[string]any{"is_active": active, "enforcement_type": "DEFAULT"}
	if active {
		lock["time_enforcement_ends"] = strconv.FormatInt(until.Unix(), 10)
	}
	body, _ := json.Marshal(map[string]any{"data": map[string]any{"xwa2_notify_account_reachout_timelock": lock}})
	note := waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
		"from": types.ServerJID, "type": "mex", "id": randomBase64(9), "t": time.Now().Unix(),
	}, Content: []waBinary.Node{{Tag: "update", Attrs: waBinary.Attrs{"op_name": "NotificationUserReachoutTimelockUpdate"}, Content: body}}}
	conns := u.liveConns()
	for _, c := range conns {
		_ = c.send(note)
	}
	return len(conns)
}

// ChatStates lists the typing indicators sent to the user, oldest first.
func (u *User) ChatStates() []ChatState { return u.chatStates.all() }

type chatStateJSON struct {
	From  string    `json:"from"`
	State string    `json:"state"`
	Media string    `json:"media,omitempty"`
	At    time.Time `json:"at"`
}

// apiChatStates lists the typing indicators the user received.
func (s *Simulator) apiChatStates(w http.ResponseWriter, _ *http.Request, u *User) {
	out := []chatStateJSON{}
	for _, cs := range u.ChatStates() {
		out = append(out, chatStateJSON{From: cs.From.String(), State: cs.State, Media: cs.Media, At: cs.At})
	}
	writeJSON(w, http.StatusOK, out)
}
