package dashboard

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

var (
	errCodeLocked = bridge.Errorf(bridge.KindRateLimited, bridge.CodeLocked, "Too many wrong codes; this action is locked for a few minutes.")
	errWrongCode  = bridge.Errorf(bridge.KindForbidden, bridge.CodeWrongCode, "Wrong or used code.")
	errNoChat     = bridge.Errorf(bridge.KindUnavailable, bridge.CodeNotLinked, "No linked account is connected to send a code to.")
	errTooSoon    = bridge.Errorf(bridge.KindRateLimited, bridge.CodeTooSoon, "A code was sent moments ago; look in the account's own chat.")
)

// Wrong one-time codes allowed for an action before it locks, and for how
// long; the lock is for the action, whoever asks, because an attacker who
// passed the sign-in can change address.
const (
	maxCodeFailures = 5
	codeLockout     = 5 * time.Minute
)

// chatCodeTTL is how long a code sent to the account's own chat is valid;
// chatCodeEvery is how often the bridge sends one, whoever asks, so that
// signed-in clients cannot flood the owner's chat.
const (
	chatCodeTTL   = 5 * time.Minute
	chatCodeEvery = 30 * time.Second
)

// checkCode verifies the one-time code of the form for action: a TOTP code,
// or the code sent to the account's own chat. It returns an error when the
// code is missing, wrong or the action is locked (setting Retry-After on w);
// every attempt counts towards the lock until it succeeds, and the lock is
// audited.
func (d *Dashboard) checkCode(w http.ResponseWriter, r *http.Request, ws webSession, action audit.Action) error {
	key := string(action)
	ok, left, last := d.codes.Attempt(key)
	if !ok {
		w.Header().Set("Retry-After", fmt.Sprint(int(left.Seconds())+1))
		return errCodeLocked
	}
	code := strings.TrimSpace(r.PostFormValue("code"))
	if d.totp.verify(code, d.opts.Now()) || d.sessions.takeChatCode(ws.id, code) {
		d.codes.Reset(key)
		return nil
	}
	detail := "wrong one-time code"
	if last {
		detail = fmt.Sprintf("locked for %s after %d wrong one-time codes", codeLockout, maxCodeFailures)
	}
	d.opts.Audit.Record(r, action, audit.OutcomeRejected, detail)
	return errWrongCode
}

// sendChatCode sends a fresh one-time code to the linked account's own chat
// ("Message yourself"), for operators without TOTP.
func (d *Dashboard) sendChatCode(w http.ResponseWriter, r *http.Request, ws webSession) error {
	st := d.opts.Session.Status()
	if !st.Connected() {
		return errNoChat
	}
	ownChat, err := bridge.ParseRecipient(st.Account)
	if err != nil {
		return errNoChat // no account number known yet
	}
	now := d.opts.Now()
	if !d.takeChatCodeTurn(now) {
		d.opts.Audit.Record(r, audit.ActionChatCode, audit.OutcomeRejected, "too soon")
		return errTooSoon
	}
	// crypto/rand never fails (it crashes the program instead, Go 1.24+).
	n, _ := rand.Int(rand.Reader, big.NewInt(1_000_000))
	code := fmt.Sprintf("%06d", n.Int64())
	err = d.opts.Session.Send(r.Context(), bridge.Outgoing{
		ID: d.opts.Session.NewMessageID(), Recipient: ownChat, Type: bridge.TypeText,
		Text: "msgbridge dashboard code: " + code + " (valid 5 minutes). If you did not ask for it, someone has your admin token.",
	})
	if err != nil {
		d.opts.Audit.Record(r, audit.ActionChatCode, audit.OutcomeFailure, "")
		return httpkit.SessionError(err) // logged there; the code itself never is
	}
	d.opts.Audit.Record(r, audit.ActionChatCode, audit.OutcomeSuccess, "")
	d.sessions.update(ws.id, func(s *webSession) { s.chatCode, s.chatCodeExpires = code, now.Add(chatCodeTTL) })
	return httpkit.WriteJSON(w, http.StatusOK, message{"A code was sent to the account's own chat."})
}

// takeChatCodeTurn reports whether a code may be sent at now, and if so
// counts it as sent: at most one per chatCodeEvery for the whole bridge.
func (d *Dashboard) takeChatCodeTurn(now time.Time) bool {
	d.chatCodeMu.Lock()
	defer d.chatCodeMu.Unlock()
	if !d.lastChatCode.IsZero() && now.Before(d.lastChatCode.Add(chatCodeEvery)) {
		return false
	}
	d.lastChatCode = now
	return true
}
