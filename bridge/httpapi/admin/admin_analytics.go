package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/internal/httpkit"
)

// DeliveryAnalytics counts deliveries per UTC day (the send queue's
// rollup).
type DeliveryAnalytics interface {
	// DeliveryDays lists the days UTC days ending with now's, oldest first,
	// days without traffic included as zeros.
	DeliveryDays(ctx context.Context, now time.Time, days int) ([]bridge.DeliveryDay, error)
}

// deliveryDayJSON is one day of GET /api/admin/analytics/delivery.
type deliveryDayJSON struct {
	Day     string `json:"day"` // YYYY-MM-DD
	Success int64  `json:"success"`
	Failed  int64  `json:"failed"`
}

// deliveryAnalytics is GET /api/admin/analytics/delivery?days=N (1-366,
// default 7): the last N UTC days up to today, oldest first.
func (s *server) deliveryAnalytics(w http.ResponseWriter, r *http.Request) error {
	q, err := httpkit.StrictQuery(r, "days")
	if err != nil {
		return err
	}
	v, present := q["days"]
	days, err := httpkit.ParseDays(v, present)
	if err != nil {
		return err
	}
	counts, err := s.Analytics.DeliveryDays(r.Context(), s.Now(), days)
	if err != nil {
		return bridge.Internal(bridge.CodeInternalError, "delivery analytics failed; see the bridge's log", err)
	}
	out := make([]deliveryDayJSON, len(counts))
	for i, d := range counts {
		out[i] = deliveryDayJSON{Day: d.Day.UTC().Format(time.DateOnly), Success: d.Success, Failed: d.Failed}
	}
	return httpkit.WriteJSON(w, http.StatusOK, out)
}
