package messaging

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// RecentEvents reads the event log's latest events of some types
// (*webhook.Outbox): the dashboard's calls and blocks.
type RecentEvents interface {
	RecentEvents(ctx context.Context, types []string, limit int) ([]webhook.Logged, error)
}

// maxDashboardCalls bounds the calls and blocks the dashboard shows.
const maxDashboardCalls = 200

// listCalls is the dashboard's GET /calls: the latest call.offer,
// call.ended and contact.blocked events of the event log (its retention,
// EVENT_LOG_RETENTION), newest first, as their webhooks carry them.
func (s *server) listCalls(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpkit.StrictQuery(r); err != nil {
		return err
	}
	out := struct {
		Events []json.RawMessage `json:"events"`
	}{Events: []json.RawMessage{}}
	recent, ok := s.Events.Log.(RecentEvents)
	if !ok {
		return httpkit.WriteJSON(w, http.StatusOK, out)
	}
	logged, err := recent.RecentEvents(r.Context(),
		[]string{webhook.TypeCallOffer, webhook.TypeCallEnded, webhook.TypeContactBlocked}, maxDashboardCalls)
	if err != nil {
		return err
	}
	for _, l := range logged {
		out.Events = append(out.Events, l.Payload)
	}
	return httpkit.WriteJSON(w, http.StatusOK, out)
}
