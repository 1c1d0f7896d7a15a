package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
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

// Pacing is the send queue's state (*sendqueue.Queue).
type Pacing interface {
	Pace(ctx context.Context) (sendqueue.Pace, error)
}

// sendQueue is the send queue as /health and the admin state show it; nil
// without a Pacing, or when it cannot be read (the probe must not fail for
// it: it reports the process).
func (s *server) sendQueue(ctx context.Context) *contract.SendQueue {
	if s.Pacing == nil {
		return nil
	}
	p, err := s.Pacing.Pace(ctx)
	if err != nil {
		s.Log.Error(err, "read the send queue's pace")
		return nil
	}
	// To the millisecond, as the answers' scheduled_at, so that the two
	// compare equal.
	next := optionalTime(p.NextSendAt.Truncate(time.Millisecond))
	return &contract.SendQueue{Depth: p.Depth, Rate: p.Rate.String(), NextSendAt: next}
}

func (s *server) health(w http.ResponseWriter, r *http.Request) error {
	now := s.Now()
	st := s.Session.Status()
	return WriteJSON(w, http.StatusOK, healthResponse{
		Status:          "online",
		WhatsApp:        healthLink(st),
		Uptime:          int64(now.Sub(s.Started) / time.Second),
		Version:         contract.BuildVersion(),
		Timestamp:       bridge.FormatTime(now),
		RestrictedUntil: optionalTime(st.RestrictedUntil),
		SendQueue:       s.sendQueue(r.Context()),
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
