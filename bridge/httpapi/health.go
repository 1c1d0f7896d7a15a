package httpapi

import (
	"math"
	"net/http"
)

// healthResponse is GET /health. It reports the process: the WhatsApp link's
// state is a field, never a reason to fail, because a pod must stay reachable
// (and so Ready) while a person pairs it.
type healthResponse struct {
	Status    string  `json:"status"`
	WhatsApp  string  `json:"whatsapp"`
	Uptime    float64 `json:"uptime"`
	Version   string  `json:"version"`
	Timestamp string  `json:"timestamp"`
}

// timestampLayout is RFC 3339 in UTC with milliseconds: 2026-11-21T10:00:00.000Z.
const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

func healthHandler(d Deps) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		now := d.Now()
		uptime := now.Sub(d.Started).Seconds()
		writeJSON(w, healthResponse{
			Status:    "online",
			WhatsApp:  string(d.Session.Status().State),
			Uptime:    math.Round(uptime*1000) / 1000,
			Version:   d.Version,
			Timestamp: now.UTC().Format(timestampLayout),
		})
	}
}
