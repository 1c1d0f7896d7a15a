package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/phone"
	"github.com/msgbridge/msgbridge/contract"
)

// Session is what the API needs of the WhatsApp session (*whatsapp.Manager).
type Session interface {
	Status() bridge.SessionStatus
	QR(ctx context.Context) (string, error)
	PairingCode(ctx context.Context, phone string) (string, error)
	Groups(ctx context.Context) ([]bridge.Group, error)
	Logout(ctx context.Context) error
}

// GET /session/status: no credential, only whether the link is up.
func sessionStatus(s Session) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]bool{"connected": s.Status().Connected()})
	}
}

// GET /session/qr
func sessionQR(s Session) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		qr, err := s.QR(r.Context())
		if err != nil {
			writeSessionError(w, err)
			return
		}
		writeJSON(w, map[string]string{"qr": qr})
	}
}

// POST /session/pairing-code {"number": "…"}
func sessionPairingCode(s Session) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Number string `json:"number"`
		}
		if !decodeJSON(w, r, &req) {
			return
		}
		number, err := phone.Normalize(req.Number)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_number", "number must be the phone's digits with country code")
			return
		}
		code, err := s.PairingCode(r.Context(), number)
		if err != nil {
			writeSessionError(w, err)
			return
		}
		writeJSON(w, map[string]string{"code": code})
	}
}

type groupJSON struct {
	ID           string `json:"id"`
	Subject      string `json:"subject"`
	Participants int    `json:"participants"`
}

// GET /session/groups
func sessionGroups(s Session) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		groups, err := s.Groups(r.Context())
		if err != nil {
			writeSessionError(w, err)
			return
		}
		out := make([]groupJSON, len(groups))
		for i, g := range groups {
			out[i] = groupJSON{ID: g.ID, Subject: g.Subject, Participants: g.Participants}
		}
		writeJSON(w, out)
	}
}

// POST /session/logout
func sessionLogout(s Session) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.Logout(r.Context()); err != nil {
			writeSessionError(w, err)
			return
		}
		writeJSON(w, map[string]string{"status": "success", "message": "logged out; the credentials were deleted"})
	}
}

// GET /api/admin/state: what the operator mirrors into the MessagingBridge
// status.
func adminState(s Session, version string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		st := s.Status()
		writeJSON(w, contract.AdminState{
			State:          contract.SessionState(st.State),
			Connected:      st.Connected(),
			Account:        st.Account,
			PushName:       st.PushName,
			LastHeartbeat:  optionalTime(st.LastHeartbeat),
			ConnectedSince: optionalTime(st.ConnectedSince),
			Reason:         contract.Reason(st.Reason),
			Version:        version,
		})
	}
}

func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// writeSessionError maps the session's errors to status codes.
func writeSessionError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, bridge.ErrLinked):
		writeError(w, http.StatusConflict, "already_linked", err.Error())
	case errors.Is(err, bridge.ErrNotLinked):
		writeError(w, http.StatusServiceUnavailable, "not_linked", err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, "timeout", "WhatsApp did not answer in time")
	default:
		writeError(w, http.StatusBadGateway, "whatsapp_error", "WhatsApp refused or failed the request: "+err.Error())
	}
}
