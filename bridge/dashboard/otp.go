package dashboard

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/session"
)

// chatCodeTTL is how long a code sent to the account's own chat is valid.
const chatCodeTTL = 5 * time.Minute

// checkCode verifies the one-time code of the form for action: a TOTP code,
// or the code sent to the account's own chat. It answers the client itself
// and returns false when the code is missing, wrong or the action is locked;
// wrong codes count towards the lock, and the lock is audited.
func (d *Dashboard) checkCode(w http.ResponseWriter, r *http.Request, ws webSession, action audit.Action) bool {
	key := string(action)
	if blocked, left := d.codes.blocked(key); blocked {
		w.Header().Set("Retry-After", fmt.Sprint(int(left.Seconds())+1))
		writeJSONError(w, http.StatusTooManyRequests, "Too many wrong codes; this action is locked for a few minutes.")
		return false
	}
	code := strings.TrimSpace(r.PostFormValue("code"))
	if d.totp.verify(code, d.opts.Now()) || d.sessions.takeChatCode(ws.id, code) {
		d.codes.reset(key)
		return true
	}
	if d.codes.fail(key) {
		d.opts.Audit.Record(r, action, audit.OutcomeRejected, fmt.Sprintf("locked for %s after %d wrong one-time codes", codeLockout, maxCodeFailures))
	} else {
		d.opts.Audit.Record(r, action, audit.OutcomeRejected, "wrong one-time code")
	}
	writeJSONError(w, http.StatusForbidden, "Wrong or used code.")
	return false
}

// sendChatCode sends a fresh one-time code to the linked account's own chat
// ("Message yourself"), for operators without TOTP.
func (d *Dashboard) sendChatCode(w http.ResponseWriter, r *http.Request, ws webSession) {
	st := d.opts.Session.Status()
	if !st.Connected() || st.Account == "" {
		writeJSONError(w, http.StatusServiceUnavailable, "No linked account is connected to send a code to.")
		return
	}
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, "could not make a code")
		return
	}
	code := fmt.Sprintf("%06d", n.Int64())
	err = d.opts.Session.Send(r.Context(), session.Outgoing{
		ID: d.opts.Session.NewMessageID(), Recipient: st.Account + "@s.whatsapp.net", Kind: session.KindText,
		Text: "msgbridge dashboard code: " + code + " (valid 5 minutes). If you did not ask for it, someone has your admin token.",
	})
	if err != nil {
		d.opts.Log.Error(err, "send dashboard code to own chat") // the code itself is never logged
		writeJSONError(w, http.StatusBadGateway, "The code could not be sent.")
		return
	}
	d.sessions.update(ws.id, func(s *webSession) { s.chatCode, s.chatCodeExpires = code, d.opts.Now().Add(chatCodeTTL) })
	writeJSON(w, http.StatusOK, map[string]string{"message": "A code was sent to the account's own chat."})
}
