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
	// SendQueue is the outgoing queue: how many messages wait, the pace
	// they go at and when the next one goes. Absent from bridges that
	// predate it.
	SendQueue *SendQueue `json:"send_queue,omitempty"`
}

// SendQueue is the bridge's outgoing queue, in GET /health and the admin
// state: a user who sent 30 messages sees them wait for the pace instead
// of wondering why they arrive over minutes.
type SendQueue struct {
	// Depth is the number of messages waiting for an attempt.
	Depth int `json:"depth"`
	// Rate is SEND_RATE, e.g. "20/m": at most that many attempts, jittered
	// to on average 1/1.25 of it.
	Rate string `json:"rate"`
	// NextSendAt is when the next attempt is expected; null when nothing
	// waits.
	NextSendAt *time.Time `json:"next_send_at"`
}
