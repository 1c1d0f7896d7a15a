package contract

import "time"

// Headers that carry the bridge's credentials.
const (
	AdminTokenHeader = "X-Admin-Token"
	APIKeyHeader     = "X-Api-Key" //nolint:gosec // a header's name, not a credential
)

// AdminStatePath is the endpoint the operator polls.
const AdminStatePath = "/api/admin/state"

// AdminState is the body of GET /api/admin/state: what the operator reads to
// mirror a bridge's session into its resource's status.
type AdminState struct {
	State          SessionState `json:"state"`
	Connected      bool         `json:"connected"`
	Account        string       `json:"account"`
	PushName       string       `json:"push_name"`
	LastHeartbeat  *time.Time   `json:"last_heartbeat"`
	ConnectedSince *time.Time   `json:"connected_since"`
	Reason         Reason       `json:"reason"`
	Version        string       `json:"version"`
	// RestrictedUntil is when WhatsApp's restriction of sending ends; null
	// when sending is not restricted.
	RestrictedUntil *time.Time `json:"restricted_until"`
}
