// Package adminapi is the wire contract of the bridge endpoints that the
// operator calls: one definition for the server (bridge/api) and the client
// (controllers/bridgeapi), so that the two cannot drift apart. It depends on
// the standard library only.
package adminapi

import "time"

// AdminTokenHeader carries the bridge's ADMIN_TOKEN.
const AdminTokenHeader = "X-Admin-Token"

// State is the body of GET /api/admin/state (DESIGN.md section 3).
type State struct {
	State          string     `json:"state"`
	Connected      bool       `json:"connected"`
	Account        string     `json:"account"`
	PushName       string     `json:"push_name"`
	LastHeartbeat  *time.Time `json:"last_heartbeat"`
	ConnectedSince *time.Time `json:"connected_since"`
	Reason         string     `json:"reason"`
	Version        string     `json:"version"`
}
