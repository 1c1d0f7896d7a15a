package webhook

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/apitest"
)

// Every Failed message.status says why; no other status has a reason.
func TestMessageStatusCarriesTheFailReason(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	base := bridge.Message{WhatsAppID: "3EB0A", Recipient: bridge.PhoneRecipient("4915112345678"), UpdatedAt: at}
	for _, tc := range []struct {
		status    bridge.Status
		lastError string
		reason    string
	}{
		{bridge.StatusFailed, "not_on_whatsapp", `,"reason":"not_on_whatsapp"`},
		{bridge.StatusFailed, "logged_out", `,"reason":"logged_out"`},
		{bridge.StatusFailed, "not_linked: no linked WhatsApp session is connected", `,"reason":"retries_exhausted"`},
		{bridge.StatusSent, "", ""},
	} {
		m := base
		m.Status, m.LastError = tc.status, tc.lastError
		body, err := json.Marshal(MessageStatusOf(m).Payload)
		if err != nil {
			t.Fatal(err)
		}
		apitest.ValidateWebhook(t, body)
		want := `{"event":"message.status","whatsapp_id":"3EB0A","status":"` + string(tc.status) +
			`","recipient":"4915112345678@s.whatsapp.net","timestamp":"2026-11-21T10:00:00.000Z"` + tc.reason + `}`
		if string(body) != want {
			t.Errorf("got  %s\nwant %s", body, want)
		}
	}
}
