package dashboard

import (
	"context"
	"errors"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge/audit"
	"github.com/msgbridge/msgbridge/bridge/phone"
	"github.com/msgbridge/msgbridge/bridge/session"
)

// showQR starts a link attempt and lets this browser see its QR codes. With
// TOTP configured it needs a code; without, signing in is enough, and the
// attempt only starts while nothing is linked.
func (d *Dashboard) showQR(w http.ResponseWriter, r *http.Request, ws webSession) {
	if d.opts.Session.Status().Connected() {
		writeJSONError(w, http.StatusConflict, "An account is already linked; log out first.")
		return
	}
	if len(d.opts.TOTPKey) > 0 && !d.checkCode(w, r, ws, audit.ActionPairingQR) {
		return
	}
	// The first code can take a while; the stream shows it as it comes.
	if _, err := d.opts.Session.QR(r.Context()); err != nil {
		d.opts.Audit.Record(r, audit.ActionPairingQR, outcomeOf(err), "")
		writeSessionError(w, err)
		return
	}
	d.sessions.update(ws.id, func(s *webSession) { s.qrShown = true })
	d.opts.Audit.Record(r, audit.ActionPairingQR, audit.OutcomeSuccess, "dashboard")
	writeJSON(w, http.StatusOK, map[string]string{"message": "Scan the QR code with WhatsApp: Linked devices → Link a device."})
}

// pairingCode asks for a code to enter on the phone of the given number.
func (d *Dashboard) pairingCode(w http.ResponseWriter, r *http.Request, _ webSession) {
	number, err := phone.Normalize(r.PostFormValue("number"))
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "Enter the phone's number with country code.")
		return
	}
	code, err := d.opts.Session.PairingCode(r.Context(), number)
	d.opts.Audit.Record(r, audit.ActionPairingCode, outcomeOf(err), "dashboard")
	if err != nil {
		writeSessionError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"code": code, "message": "Enter this code on the phone: Linked devices → Link with phone number."})
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
	writeJSON(w, http.StatusOK, out)
}

// logout unlinks the account; it needs a one-time code.
func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request, ws webSession) {
	if !d.checkCode(w, r, ws, audit.ActionLogout) {
		return
	}
	// The logout finishes even if the browser goes away meanwhile.
	err := d.opts.Session.Logout(context.WithoutCancel(r.Context()))
	// The next link needs a new code to show its QR codes.
	d.sessions.update(ws.id, func(s *webSession) { s.qrShown = false })
	d.opts.Audit.Record(r, audit.ActionLogout, outcomeOf(err), "dashboard")
	if err != nil {
		d.opts.Log.Error(err, "logout from the dashboard")
		writeJSONError(w, http.StatusInternalServerError, "Logout failed; see the bridge's log.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"message": "Logged out; the credentials are deleted."})
}

func outcomeOf(err error) audit.Outcome {
	switch {
	case err == nil:
		return audit.OutcomeSuccess
	case errors.Is(err, session.ErrLinked), errors.Is(err, session.ErrNotLinked):
		return audit.OutcomeRejected
	}
	return audit.OutcomeFailure
}

func writeSessionError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, session.ErrLinked):
		writeJSONError(w, http.StatusConflict, "An account is already linked; log out first.")
	case errors.Is(err, session.ErrNotLinked):
		writeJSONError(w, http.StatusServiceUnavailable, "No linked account is connected.")
	default:
		writeJSONError(w, http.StatusBadGateway, "WhatsApp did not answer; try again.")
	}
}
