package cloudapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// FormatName is the subscriptions' format of the Cloud API's webhooks.
const FormatName = "cloud"

// WebhookFormat is the subscriptions' cloud format: each event as the Cloud
// API's webhook (Encode; events Cloud has no webhook for are skipped),
// signed with X-Hub-Signature-256 under the subscription's secret, and
// Meta's verification handshake when a subscription is created or changed,
// with the subscription's credentials token as the receiver's verify token
// (Chatwoot's "Webhook Verify Token").
type WebhookFormat struct {
	// Account is the linked number ("" while unlinked), the body's
	// phone_number_id.
	Account func() string
	// UserIDs issues the contacts' user ids; the keyless default when nil.
	UserIDs *UserIDs
	// Client performs the handshake; http.DefaultClient when nil.
	Client *http.Client
}

var (
	_ webhook.Format   = WebhookFormat{}
	_ webhook.Verifier = WebhookFormat{}
)

// Encode is the stored event's Cloud webhook body.
func (f WebhookFormat) Encode(ev webhook.Stored) ([]byte, http.Header, error) {
	return EncodeWith(f.Account(), f.UserIDs, webhook.Event{ID: ev.ID, Type: ev.Type, Payload: json.RawMessage(ev.Payload)}, nil)
}

// Sign sets X-Hub-Signature-256 as Meta does; with no secret, none.
func (WebhookFormat) Sign(h http.Header, secret []byte, _ string, _ time.Time, body []byte) {
	if len(secret) == 0 {
		h.Del(SignatureHeader)
		return
	}
	h.Set(SignatureHeader, Sign(body, secret))
}

// Verify performs Meta's hub.challenge handshake against the target.
func (f WebhookFormat) Verify(ctx context.Context, s webhook.Subscription) error {
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	return Handshake(ctx, client, s.Target, s.Credentials.Token)
}
