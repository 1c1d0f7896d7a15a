package dashboard

import (
	"context"
	"errors"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/httpapi"
	"github.com/msgbridge/msgbridge/bridge/phone"
)

// message is the answer of a dashboard action that succeeded.
type message struct {
	Message string `json:"message"`
}

// needsCode reports whether linking needs a one-time code: with TOTP
// configured, yes; without, signing in is enough while nothing is linked.
func (d *Dashboard) needsCode() bool { return len(d.opts.TOTPKey) > 0 }

// showQR starts a link attempt, or joins the running one, and lets this
// browser see that attempt's QR codes (and no later attempt's).
func (d *Dashboard) showQR(w http.ResponseWriter, r *http.Request, ws webSession) {
	if d.opts.Session.Status().Connected() {
		writeSessionError(w, bridge.ErrLinked)
		return
	}
	if d.needsCode() && !d.checkCode(w, r, ws, audit.ActionPairingQR) {
		return
	}
	// QR returns once the attempt has its first code.
	if _, err := d.opts.Session.QR(r.Context()); err != nil {
		d.opts.Audit.Record(r, audit.ActionPairingQR, outcomeOf(err), "dashboard")
		writeSessionError(w, err)
		return
	}
	attempt := d.opts.Session.CurrentQR().Attempt
	d.sessions.update(ws.id, func(s *webSession) { s.qrAttempt = attempt })
	d.wakeStreams() // show the code now, not at the next tick
	d.opts.Audit.Record(r, audit.ActionPairingQR, audit.OutcomeSuccess, "dashboard")
	httpapi.Write(w, http.StatusOK, message{"Scan the QR code with WhatsApp: Linked devices → Link a device."})
}

// pairingCode asks for a code to enter on the phone of the given number.
// It links an account as a QR code does, so it needs the same one-time code.
func (d *Dashboard) pairingCode(w http.ResponseWriter, r *http.Request, ws webSession) {
	number, err := phone.Normalize(r.PostFormValue("number"))
	if err != nil {
		httpapi.Error(w, http.StatusBadRequest, "invalid_number", "Enter the phone's number with country code.")
		return
	}
	if d.needsCode() && !d.checkCode(w, r, ws, audit.ActionPairingCode) {
		return
	}
	code, err := d.opts.Session.PairingCode(r.Context(), number)
	d.opts.Audit.Record(r, audit.ActionPairingCode, outcomeOf(err), "dashboard")
	if err != nil {
		writeSessionError(w, err)
		return
	}
	httpapi.Write(w, http.StatusOK, struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{code, "Enter this code on the phone: Linked devices → Link with phone number."})
}

// groups lists the joined groups.
func (d *Dashboard) groups(w http.ResponseWriter, r *http.Request, _ webSession) {
	gs, err := d.opts.Session.Groups(r.Context())
	if err != nil {
		writeSessionError(w, err)
		return
	}
	type group struct {
		ID           string `json:"id"`
		Subject      string `json:"subject"`
		Participants int    `json:"participants"`
	}
	out := make([]group, 0, len(gs))
	for _, g := range gs {
		out = append(out, group(g))
	}
	httpapi.Write(w, http.StatusOK, out)
}

// logout unlinks the account; it needs a one-time code.
func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request, ws webSession) {
	if !d.checkCode(w, r, ws, audit.ActionLogout) {
		return
	}
	// The logout finishes even if the browser goes away meanwhile.
	err := d.opts.Session.Logout(context.WithoutCancel(r.Context()))
	d.opts.Audit.Record(r, audit.ActionLogout, outcomeOf(err), "dashboard")
	if err != nil {
		d.opts.Log.Error(err, "logout from the dashboard")
		httpapi.Error(w, http.StatusInternalServerError, "internal", "Logout failed; see the bridge's log.")
		return
	}
	httpapi.Write(w, http.StatusOK, message{"Logged out; the credentials are deleted."})
}

func outcomeOf(err error) audit.Outcome {
	switch {
	case err == nil:
		return audit.OutcomeSuccess
	case errors.Is(err, bridge.ErrLinked), errors.Is(err, bridge.ErrNotLinked):
		return audit.OutcomeRejected
	}
	return audit.OutcomeFailure
}

func writeSessionError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, bridge.ErrLinked):
		httpapi.Error(w, http.StatusConflict, "already_linked", "An account is already linked; log out first.")
	case errors.Is(err, bridge.ErrNotLinked):
		httpapi.Error(w, http.StatusServiceUnavailable, "not_linked", "No linked account is connected.")
	default:
		httpapi.Error(w, http.StatusBadGateway, "whatsapp_unavailable", "WhatsApp did not answer; try again.")
	}
}
