package dashboard

import (
	"context"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi/admin"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// message is the answer of a dashboard action that succeeded.
type message struct {
	Message string `json:"message"`
}

var errPairingNumber = bridge.Invalid(bridge.CodeInvalidNumber, "Enter the phone's number with country code.")

// needsCode reports whether linking needs a one-time code: with TOTP
// configured, yes; without, signing in is enough while nothing is linked.
func (d *Dashboard) needsCode() bool { return len(d.opts.TOTPKey) > 0 }

// showQR starts a link attempt, or joins the running one, and lets this
// browser see that attempt's QR codes (and no later attempt's).
func (d *Dashboard) showQR(w http.ResponseWriter, r *http.Request, ws webSession) error {
	if d.opts.Session.Status().Connected() {
		return bridge.ErrLinked
	}
	if d.needsCode() {
		if err := d.checkCode(w, r, ws, audit.ActionPairingQR); err != nil {
			return err
		}
	}
	// QR returns once the attempt has its first code.
	if _, err := d.opts.Session.QR(r.Context()); err != nil {
		return d.opts.Audit.RecordResult(r, audit.ActionPairingQR, "dashboard", httpkit.SessionError(err))
	}
	attempt := d.opts.Session.CurrentQR().Attempt
	d.sessions.update(ws.id, func(s *webSession) { s.qrAttempt = attempt })
	d.wakeStreams() // show the code now, not at the next tick
	d.opts.Audit.Record(r, audit.ActionPairingQR, audit.OutcomeSuccess, "dashboard")
	return httpkit.WriteJSON(w, http.StatusOK, message{"Scan the QR code with WhatsApp: Linked devices → Link a device."})
}

// pairingCode asks for a code to enter on the phone of the given number.
// It links an account as a QR code does, so it needs the same one-time code.
func (d *Dashboard) pairingCode(w http.ResponseWriter, r *http.Request, ws webSession) error {
	number, err := bridge.NormalizePhone(r.PostFormValue("number"))
	if err != nil {
		return errPairingNumber
	}
	if d.needsCode() {
		if err := d.checkCode(w, r, ws, audit.ActionPairingCode); err != nil {
			return err
		}
	}
	code, err := d.opts.Session.PairingCode(r.Context(), number)
	if err := d.opts.Audit.RecordResult(r, audit.ActionPairingCode, "dashboard", httpkit.SessionError(err)); err != nil {
		return err
	}
	return httpkit.WriteJSON(w, http.StatusOK, struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{code, "Enter this code on the phone: Linked devices → Link with phone number."})
}

// groups lists the joined groups.
func (d *Dashboard) groups(w http.ResponseWriter, r *http.Request, _ webSession) error {
	gs, err := d.opts.Session.Groups(r.Context())
	if err != nil {
		return httpkit.SessionError(err)
	}
	return httpkit.WriteJSON(w, http.StatusOK, admin.GroupsJSON(gs))
}

// logout unlinks the account; it needs a one-time code.
func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request, ws webSession) error {
	if err := d.checkCode(w, r, ws, audit.ActionLogout); err != nil {
		return err
	}
	// The logout finishes even if the browser goes away meanwhile.
	err := d.opts.Session.Logout(context.WithoutCancel(r.Context()))
	if err := d.opts.Audit.RecordResult(r, audit.ActionLogout, "dashboard", httpkit.SessionError(err)); err != nil {
		return err
	}
	return httpkit.WriteJSON(w, http.StatusOK, message{"Logged out; the credentials are deleted."})
}
