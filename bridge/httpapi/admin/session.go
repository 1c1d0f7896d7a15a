package admin

import (
	"context"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
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

// GET /session/status needs no credential: it tells only whether the link
// is up.
func (s *server) sessionStatus(w http.ResponseWriter, _ *http.Request) error {
	return httpkit.WriteJSON(w, http.StatusOK, map[string]bool{"connected": s.Session.Status().Connected()})
}

func (s *server) sessionQR(w http.ResponseWriter, r *http.Request) error {
	qr, err := s.Session.QR(r.Context())
	if err != nil {
		return httpkit.SessionError(err)
	}
	return httpkit.WriteJSON(w, http.StatusOK, map[string]string{"qr": qr})
}

var errPairingNumber = bridge.Invalid(bridge.CodeInvalidNumber, "number must be the phone's digits with country code")

func (s *server) sessionPairingCode(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Number string `json:"number"`
	}
	if err := httpkit.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	number, err := bridge.NormalizePhone(req.Number)
	if err != nil {
		return errPairingNumber
	}
	code, err := s.Session.PairingCode(r.Context(), number)
	if err != nil {
		return httpkit.SessionError(err)
	}
	return httpkit.WriteJSON(w, http.StatusOK, map[string]string{"code": code})
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
		return httpkit.SessionError(err)
	}
	return httpkit.WriteJSON(w, http.StatusOK, GroupsJSON(groups))
}

func (s *server) sessionLogout(w http.ResponseWriter, r *http.Request) error {
	if err := s.Session.Logout(r.Context()); err != nil {
		return httpkit.SessionError(err)
	}
	return httpkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "success", "message": "logged out; the credentials were deleted"})
}

// adminState is what the operator mirrors into the MessagingBridge status.
func (s *server) adminState(w http.ResponseWriter, r *http.Request) error {
	st := s.Session.Status()
	return httpkit.WriteJSON(w, http.StatusOK, contract.AdminState{
		State:           st.State,
		Connected:       st.Connected(),
		Account:         st.Account,
		PushName:        st.PushName,
		LastHeartbeat:   httpkit.OptionalTime(st.LastHeartbeat),
		ConnectedSince:  httpkit.OptionalTime(st.ConnectedSince),
		Reason:          st.Reason,
		Version:         contract.BuildVersion(),
		RestrictedUntil: httpkit.OptionalTime(st.RestrictedUntil),
		SendQueue:       httpkit.SendQueueOf(r.Context(), s.Pacing, s.Log),
	})
}
