package webhook

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/apitest"
)

// A contact's status is a status.update event (never a message.upsert of
// the contact's chat), in order per contact, and subscriptions may take it.
func TestStatusUpdatePayload(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	phone := bridge.PhoneRecipient("4915112345678")
	lid := bridge.Recipient{Kind: bridge.RecipientLID, ID: "99887766"}
	for _, c := range []struct {
		name string
		in   bridge.Incoming
		body string
	}{
		{"text", bridge.Incoming{WhatsAppID: "W", From: phone, FromPhone: phone, FromLID: lid, Chat: bridge.StatusBroadcast,
			PushName: "Ana", Type: "text", Text: "Back on Monday", Timestamp: at},
			`{"event":"status.update","whatsapp_id":"W","from":"4915112345678","from_lid":"99887766@lid","from_phone":"4915112345678","push_name":"Ana","type":"text","text":"Back on Monday","timestamp":"2026-11-21T10:00:00.000Z"}`},
		{"video", bridge.Incoming{WhatsAppID: "W", From: phone, FromPhone: phone, Chat: bridge.StatusBroadcast, PushName: "Ana",
			Type: "video", Text: "the beach", Timestamp: at, Media: &bridge.Media{ID: "med_0123456789abcdef0123456789abcdef", MimeType: "video/mp4", Size: 9}},
			`{"event":"status.update","whatsapp_id":"W","from":"4915112345678","from_lid":null,"from_phone":"4915112345678","push_name":"Ana","type":"video","text":"the beach","timestamp":"2026-11-21T10:00:00.000Z","media":{"mimetype":"video/mp4","size":9,"file_name":"","id":"med_0123456789abcdef0123456789abcdef","url":"/api/media/med_0123456789abcdef0123456789abcdef"}}`},
	} {
		ev := MessageUpsert(c.in)
		body, err := json.Marshal(ev.Payload)
		if err != nil {
			t.Fatal(err)
		}
		apitest.ValidateWebhook(t, body)
		if ev.Type != TypeStatusUpdate || ev.Key != "status:4915112345678" || string(body) != c.body {
			t.Errorf("%s: %s %s\n got %s\nwant %s", c.name, ev.Type, ev.Key, body, c.body)
		}
	}
	s := Subscription{ID: "stories", Target: "https://example.com/hook", Events: []string{TypeStatusUpdate}}
	if err := s.Validate(); err != nil || !s.Takes(TypeStatusUpdate) || s.Takes(TypeMessageUpsert) {
		t.Errorf("a subscription to status.update: %v", err)
	}
	if !slices.Contains(EventTypes, TypeStatusUpdate) {
		t.Error("status.update is not an event type")
	}
}
