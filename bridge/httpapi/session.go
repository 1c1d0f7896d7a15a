package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// Session is what the API needs of the WhatsApp link: a subset of
// bridge.Session.
type Session interface {
	Status() bridge.SessionStatus
	QR(ctx context.Context) (string, error)
	PairingCode(ctx context.Context, phone string) (string, error)
	Groups(ctx context.Context) ([]bridge.Group, error)
	Logout(ctx context.Context) error
}

// SessionError is err of a session operation as the bridge's HTTP surface
// answers it: a *bridge.Error as it is (409 already_linked, 503
// not_linked, …), a deadline as 504 timeout, anything else as WhatsApp's
// refusal or failure (502 whatsapp_error).
func SessionError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*bridge.Error](err); ok {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &bridge.Error{Kind: bridge.KindTimeout, Code: bridge.CodeTimeout, Message: "WhatsApp did not answer in time", Err: err}
	}
	return &bridge.Error{Kind: bridge.KindUpstream, Code: bridge.CodeWhatsAppError,
		Message: "WhatsApp refused or failed the request: " + err.Error(), Err: err}
}

// GET /session/status needs no credential: it tells only whether the link
// is up.
func (s *server) sessionStatus(w http.ResponseWriter, _ *http.Request) error {
	return WriteJSON(w, http.StatusOK, map[string]bool{"connected": s.Session.Status().Connected()})
}

func (s *server) sessionQR(w http.ResponseWriter, r *http.Request) error {
	qr, err := s.Session.QR(r.Context())
	if err != nil {
		return SessionError(err)
	}
	return WriteJSON(w, http.StatusOK, map[string]string{"qr": qr})
}

var errPairingNumber = bridge.Invalid(bridge.CodeInvalidNumber, "number must be the phone's digits with country code")

func (s *server) sessionPairingCode(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Number string `json:"number"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	number, err := bridge.NormalizePhone(req.Number)
	if err != nil {
		return errPairingNumber
	}
	code, err := s.Session.PairingCode(r.Context(), number)
	if err != nil {
		return SessionError(err)
	}
	return WriteJSON(w, http.StatusOK, map[string]string{"code": code})
}

// GroupJSON is a group as GET /session/groups and the dashboard list it.
type GroupJSON struct {
	ID           string `json:"id"`
	Subject      string `json:"subject"`
	Participants int    `json:"participants"`
}

// GroupsJSON maps groups to their wire form; never null.
func GroupsJSON(groups []bridge.Group) []GroupJSON {
	out := make([]GroupJSON, len(groups))
	for i, g := range groups {
		out[i] = GroupJSON(g)
	}
	return out
}

func (s *server) sessionGroups(w http.ResponseWriter, r *http.Request) error {
	groups, err := s.Session.Groups(r.Context())
	if err != nil {
		return SessionError(err)
	}
	return WriteJSON(w, http.StatusOK, GroupsJSON(groups))
}

func (s *server) sessionLogout(w http.ResponseWriter, r *http.Request) error {
	if err := s.Session.Logout(r.Context()); err != nil {
		return SessionError(err)
	}
	return WriteJSON(w, http.StatusOK, map[string]string{"status": "success", "message": "logged out; the credentials were deleted"})
}

// adminState is what the operator mirrors into the MessagingBridge status.
func (s *server) adminState(w http.ResponseWriter, r *http.Request) error {
	st := s.Session.Status()
	return WriteJSON(w, http.StatusOK, contract.AdminState{
		State:           st.State,
		Connected:       st.Connected(),
		Account:         st.Account,
		PushName:        st.PushName,
		LastHeartbeat:   optionalTime(st.LastHeartbeat),
		ConnectedSince:  optionalTime(st.ConnectedSince),
		Reason:          st.Reason,
		Version:         contract.BuildVersion(),
		RestrictedUntil: optionalTime(st.RestrictedUntil),
		SendQueue:       s.sendQueue(r.Context()),
	})
}

func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
