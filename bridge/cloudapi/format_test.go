package cloudapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// The subscriptions' cloud format: a received text becomes Cloud's webhook
// signed under the subscription's secret; a session change has no Cloud
// shape and is skipped; the handshake sends the credentials token as the
// verify token.
func TestWebhookFormat(t *testing.T) {
	f := WebhookFormat{Account: func() string { return "4915100000001" }}
	text := webhook.Stored{ID: "msg_1", Type: webhook.TypeMessageUpsert, Payload: []byte(
		`{"event":"message.upsert","id":"3EB0A1","from":"4915100000002","chat":"4915100000002@s.whatsapp.net","type":"text","text":"hi","timestamp":"2026-11-21T10:00:00.000Z"}`)}
	body, h, err := f.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	f.Sign(h, []byte("s3cret"), text.ID, time.Time{}, body)
	if got, want := h.Get(SignatureHeader), Sign(body, []byte("s3cret")); got != want || !strings.Contains(string(body), `"whatsapp_business_account"`) {
		t.Errorf("signature %q (want %q), body %s", got, want, body)
	}
	f.Sign(h, nil, text.ID, time.Time{}, body)
	if h.Get(SignatureHeader) != "" {
		t.Error("an unsigned subscription's delivery carries a signature")
	}
	_, _, err = f.Encode(webhook.Stored{ID: "msg_2", Type: webhook.TypeSessionStatus, Payload: []byte(`{"event":"session.status","state":"connected"}`)})
	if !errors.Is(err, webhook.ErrNoShape) {
		t.Errorf("session.status: %v, want a skip", err)
	}

	var token string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token = r.URL.Query().Get("hub.verify_token")
		_, _ = w.Write([]byte(r.URL.Query().Get("hub.challenge")))
	}))
	defer receiver.Close()
	s := webhook.Subscription{Target: receiver.URL + "/webhooks/whatsapp", Credentials: webhook.Credentials{Token: "verify-me"}}
	if err := f.Verify(context.Background(), s); err != nil || token != "verify-me" {
		t.Errorf("handshake: %v, verify token %q", err, token)
	}
}
