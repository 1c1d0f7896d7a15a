package webhook

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Format turns an event into what a subscription's receiver gets. A
// subscription names its format; the formats are a table keyed by name, so
// that another body (the WhatsApp Cloud API's webhooks) plugs in with
// RegisterFormat:
//
//	func init() { webhook.RegisterFormat("cloud", cloudFormat{}) }
//
// Encode and Sign run once per delivery attempt, on the stored event.
type Format interface {
	// Encode is the body and the headers (Content-Type at least) of ev.
	Encode(ev Stored) (body []byte, header http.Header, err error)
	// Sign adds to header what authenticates body to the receiver, keyed
	// with the subscription's secret (empty: unsigned), for the attempt
	// at at.
	Sign(header http.Header, secret []byte, id string, at time.Time, body []byte)
}

// Verifier is a Format whose receivers expect a handshake before they take
// events (Meta's hub.challenge for the Cloud API's webhooks): the bridge
// performs it when a subscription in the format is created or changed,
// after the target answered the connection check.
type Verifier interface {
	Verify(ctx context.Context, s Subscription) error
}

// ErrNoShape is what Encode returns (wrapped or not) for an event its
// format has no body for (the Cloud API has no webhook for session.status):
// the delivery counts as done for that subscription, with nothing sent.
var ErrNoShape = errors.New("the event has no body in this format")

// Stored is an event as the outbox keeps it.
type Stored struct {
	// ID is the webhook-id, the same on every attempt and every
	// subscription.
	ID string
	// Type is the event type, e.g. message.upsert.
	Type string
	// Payload is the standard JSON body.
	Payload []byte
}

// FormatStandard is the bodies the API description lists under webhooks,
// signed per Standard Webhooks.
const FormatStandard = "standard"

// formatCloud is the Cloud API door's format: known by name, so that it is
// refused with its own code until its encoder is registered.
const formatCloud = "cloud"

var formats = struct {
	mu     sync.RWMutex
	byName map[string]Format
}{byName: map[string]Format{FormatStandard: standardFormat{}}}

// RegisterFormat makes the format name available to subscriptions; a
// second registration of a name replaces the first.
func RegisterFormat(name string, f Format) {
	formats.mu.Lock()
	defer formats.mu.Unlock()
	formats.byName[name] = f
}

// formatOf is the format registered as name.
func formatOf(name string) (Format, error) {
	formats.mu.RLock()
	defer formats.mu.RUnlock()
	if f, ok := formats.byName[name]; ok {
		return f, nil
	}
	if name == formatCloud {
		return nil, bridge.Errorf(bridge.KindInvalid, bridge.CodeFormatUnavailable,
			"format cloud needs the Cloud API door, which this bridge does not run")
	}
	return nil, bridge.Errorf(bridge.KindInvalid, bridge.CodeUnknownFormat, "unknown format %q; use standard", name)
}

// standardFormat delivers the stored JSON as it is.
type standardFormat struct{}

func (standardFormat) Encode(ev Stored) ([]byte, http.Header, error) {
	return ev.Payload, http.Header{"Content-Type": {"application/json"}}, nil
}

func (standardFormat) Sign(h http.Header, secret []byte, id string, at time.Time, body []byte) {
	setHeaders(h, secret, id, at, body)
}
