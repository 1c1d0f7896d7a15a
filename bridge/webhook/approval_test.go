package webhook

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/apitest"
)

// Each step of an approval is a message.approval event, a rejection or an
// expiry also the message.status Failed with its reason; every payload is
// what the API description says.
func TestMessageEventsOfAnApproval(t *testing.T) {
	m := bridge.Message{ID: "0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b", WhatsAppID: "3EB0AB1", Recipient: bridge.PhoneRecipient("4915112345678"),
		Type: bridge.TypeText, UpdatedAt: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	for _, c := range []struct {
		status    bridge.Status
		lastError string
		want      []string
	}{
		{bridge.StatusAwaitingApproval, "", []string{TypeMessageApproval}},
		{bridge.StatusQueued, "", []string{TypeMessageApproval}},
		{bridge.StatusFailed, bridge.FailApprovalRejected, []string{TypeMessageApproval, TypeMessageStatus}},
		{bridge.StatusFailed, bridge.FailApprovalExpired, []string{TypeMessageApproval, TypeMessageStatus}},
		{bridge.StatusFailed, bridge.FailRetriesExhausted, []string{TypeMessageStatus}},
		{bridge.StatusSent, "", []string{TypeMessageStatus}},
	} {
		m.Status, m.LastError = c.status, c.lastError
		var got []string
		for _, ev := range MessageEvents(m) {
			got = append(got, ev.Type)
			body, err := json.Marshal(ev.Payload)
			if err != nil {
				t.Fatal(err)
			}
			apitest.ValidateWebhook(t, body)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %q: events %v, want %v", c.status, c.lastError, got, c.want)
		}
	}
}
