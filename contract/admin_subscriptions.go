package contract

import "time"

// AdminSubscriptionsPath lists a bridge's event subscriptions (GET); one is
// created or replaced with PUT and deleted with DELETE at
// AdminSubscriptionsPath + "/" + id.
const AdminSubscriptionsPath = "/api/admin/subscriptions"

// OperatorSubscriptionPrefix starts the id of every subscription the
// operator renders from a MessagingBridge's spec: it deletes only those,
// never one a person created through the admin API.
const OperatorSubscriptionPrefix = "k8s-"

// Subscription is the body of PUT /api/admin/subscriptions/{id}: one event
// receiver of the bridge. The secret and the credentials are write-only: a
// bridge never echoes them back.
type Subscription struct {
	ID string `json:"id"`
	// Target is an http(s):// URL, nats://host:port/<subject prefix> or
	// amqp(s)://host:port/<vhost>?exchange=<name>&prefix=<routing key prefix>.
	Target string `json:"target"`
	// Events filters the event types; empty receives every event.
	Events []string `json:"events"`
	// Format is standard or cloud.
	Format string `json:"format"`
	// Secret is the whsec_ signing secret of every delivery.
	Secret string `json:"secret,omitempty"`
	// Credentials authenticate to a nats:// target's server or an
	// amqp(s):// target's broker.
	Credentials *SubscriptionCredentials `json:"credentials,omitempty"`
	Headers     map[string]string        `json:"headers,omitempty"`
	Enabled     bool                     `json:"enabled"`
}

// SubscriptionCredentials are a NATS server's credentials: Token, or User
// and Password.
type SubscriptionCredentials struct {
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
	Token    string `json:"token,omitempty"`
}

// The health states of a subscription.
const (
	SubscriptionHealthy  = "healthy"
	SubscriptionFailing  = "failing"
	SubscriptionDisabled = "disabled"
)

// SubscriptionHealth is a subscription's delivery state.
type SubscriptionHealth struct {
	// State is healthy, failing or disabled.
	State         string     `json:"state"`
	Pending       int64      `json:"pending"`
	DeadLetters   int64      `json:"dead_letters"`
	LastSuccessAt *time.Time `json:"last_success_at"`
	LastFailureAt *time.Time `json:"last_failure_at"`
	LastError     string     `json:"last_error"`
}

// SubscriptionView is one entry of GET /api/admin/subscriptions: the
// subscription without its secret, and its health.
type SubscriptionView struct {
	Subscription
	Health SubscriptionHealth `json:"health"`
}
