package public

import (
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
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
	// SendQueue: how many messages wait, at what pace, and when the next
	// goes.
	SendQueue *contract.SendQueue `json:"send_queue,omitempty"`
}

func (s *server) health(w http.ResponseWriter, r *http.Request) error {
	now := s.Now()
	st := s.Link.Status()
	return httpkit.WriteJSON(w, http.StatusOK, healthResponse{
		Status:          "online",
		WhatsApp:        healthLink(st),
		Uptime:          int64(now.Sub(s.Started) / time.Second),
		Version:         contract.BuildVersion(),
		Timestamp:       bridge.FormatTime(now),
		RestrictedUntil: httpkit.OptionalTime(st.RestrictedUntil),
		SendQueue:       httpkit.SendQueueOf(r.Context(), s.Pacing, s.Log),
	})
}

// healthLink is /health's word for the link: its state, "restricted" while
// it is connected but WhatsApp restricts sending, "disk_full" while the
// bridge holds it down because DATA_DIR's disk is below its reserve, or
// "client_outdated" while WhatsApp refuses the client's version.
func healthLink(st bridge.SessionStatus) string {
	switch {
	case st.Connected() && st.Reason == contract.ReasonRestricted:
		return string(contract.ReasonRestricted)
	case st.Reason == contract.ReasonDiskFull:
		return string(contract.ReasonDiskFull)
	case st.Reason == contract.ReasonClientOutdated:
		return string(contract.ReasonClientOutdated)
	}
	return string(st.State)
}
