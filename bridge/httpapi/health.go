package httpapi

import (
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// healthResponse is GET /health. It reports the process: the WhatsApp link's
// state is a field, never a reason to fail, because a pod must stay reachable
// (and so Ready) while a person pairs it.
type healthResponse struct {
	Status   string `json:"status"`
	WhatsApp string `json:"whatsapp"`
	// Uptime is in whole seconds: probes and dashboards compare it as an
	// integer.
	Uptime    int64  `json:"uptime"`
	Version   string `json:"version"`
	Timestamp string `json:"timestamp"`
	// RestrictedUntil: while WhatsApp restricts sending, when that ends
	// (WhatsApp then reads "restricted").
	RestrictedUntil *time.Time `json:"restricted_until,omitempty"`
}

func (s *server) health(w http.ResponseWriter, _ *http.Request) error {
	now := s.Now()
	st := s.Session.Status()
	return WriteJSON(w, http.StatusOK, healthResponse{
		Status:          "online",
		WhatsApp:        healthLink(st),
		Uptime:          int64(now.Sub(s.Started) / time.Second),
		Version:         contract.BuildVersion(),
		Timestamp:       bridge.FormatTime(now),
		RestrictedUntil: optionalTime(st.RestrictedUntil),
	})
}

// healthLink is /health's word for the link: its state, "restricted" while
// it is connected but WhatsApp restricts sending, or "disk_full" while the
// bridge holds it down because DATA_DIR's disk is below its reserve.
func healthLink(st bridge.SessionStatus) string {
	switch {
	case st.Connected() && st.Reason == contract.ReasonRestricted:
		return string(contract.ReasonRestricted)
	case st.Reason == contract.ReasonDiskFull:
		return string(contract.ReasonDiskFull)
	}
	return string(st.State)
}
