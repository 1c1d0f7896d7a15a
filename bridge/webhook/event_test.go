package webhook

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/apitest"
)

// The builders' payloads, keys and ranks are byte for byte what the string
// builders before the domain types produced (recorded from them), so that
// receivers see no change; issue 14's fields (from_lid, from_phone, …) only
// follow the original ones.
func TestEventPayloads(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))
	phone := bridge.PhoneRecipient("4915112345678")
	group := bridge.Recipient{Kind: bridge.RecipientGroup, ID: "120363025246125486"}
	lid := bridge.Recipient{Kind: bridge.RecipientLID, ID: "99887766"}
	for _, c := range []struct {
		ev        Event
		key, body string
		rank      int
	}{
		{MessageStatus("3EB0ABC", phone, bridge.StatusDelivered, at), "msg:3EB0ABC",
			`{"event":"message.status","whatsapp_id":"3EB0ABC","status":"Delivered","recipient":"4915112345678@s.whatsapp.net","timestamp":"2026-11-21T09:00:00.123Z"}`, 3},
		{MessageStatus("3EB0ABD", group, bridge.StatusRead, at), "msg:3EB0ABD",
			`{"event":"message.status","whatsapp_id":"3EB0ABD","status":"Read","recipient":"120363025246125486@g.us","timestamp":"2026-11-21T09:00:00.123Z"}`, 4},
		{MessageStatus("3EB0ABE", phone, bridge.StatusFailed, at), "msg:3EB0ABE",
			`{"event":"message.status","whatsapp_id":"3EB0ABE","status":"Failed","recipient":"4915112345678@s.whatsapp.net","timestamp":"2026-11-21T09:00:00.123Z"}`, 2},
		{SessionStatus(bridge.SessionStatus{State: contract.StateDisconnected, Reason: contract.ReasonLoggedOut, Account: "491"}, at), "session",
			`{"event":"session.status","state":"disconnected","reason":"logged_out","timestamp":"2026-11-21T09:00:00.123Z"}`, 0},
		{SessionStatus(bridge.SessionStatus{State: contract.StateConnected}, at), "session",
			`{"event":"session.status","state":"connected","reason":"","timestamp":"2026-11-21T09:00:00.123Z"}`, 0},
		{MessageUpsert(bridge.Incoming{WhatsAppID: "W1", From: phone, Chat: phone, PushName: "Ana", Type: "text", Text: `hi "there" <b>&`, Timestamp: at}),
			"chat:4915112345678",
			`{"event":"message.upsert","whatsapp_id":"W1","from":"4915112345678","chat":"4915112345678","push_name":"Ana","type":"text","text":"hi \"there\" \u003cb\u003e\u0026","timestamp":"2026-11-21T09:00:00.123Z","from_lid":null,"from_phone":null}`, 0},
		{MessageUpsert(bridge.Incoming{WhatsAppID: "W2", From: phone, Chat: group, Type: "document", Text: "cv", Timestamp: at,
			Media: &bridge.Media{MimeType: "application/pdf", Size: 42, FileName: "cv.pdf"}}), "chat:120363025246125486@g.us",
			`{"event":"message.upsert","whatsapp_id":"W2","from":"4915112345678","chat":"120363025246125486@g.us","push_name":"","type":"document","text":"cv","timestamp":"2026-11-21T09:00:00.123Z","media":{"mimetype":"application/pdf","size":42,"file_name":"cv.pdf"},"from_lid":null,"from_phone":null}`, 0},
		{MessageUpsert(bridge.Incoming{WhatsAppID: "W3", From: lid, Chat: lid, Type: "image", Timestamp: at, Media: &bridge.Media{MimeType: "image/jpeg", Size: 7}}),
			"chat:99887766@lid",
			`{"event":"message.upsert","whatsapp_id":"W3","from":"99887766@lid","chat":"99887766@lid","push_name":"","type":"image","text":"","timestamp":"2026-11-21T09:00:00.123Z","media":{"mimetype":"image/jpeg","size":7,"file_name":""},"from_lid":null,"from_phone":null}`, 0},
		// A text cut to its bound names the cut and the whole size.
		{MessageUpsert(bridge.Incoming{WhatsAppID: "W4", From: phone, Chat: phone, Type: "text", Text: "ab", Timestamp: at,
			Truncated: []bridge.Cut{{Field: "text", Size: 12582912}}}), "chat:4915112345678",
			`{"event":"message.upsert","whatsapp_id":"W4","from":"4915112345678","chat":"4915112345678","push_name":"","type":"text","text":"ab","timestamp":"2026-11-21T09:00:00.123Z","from_lid":null,"from_phone":null,"truncated":[{"field":"text","size":12582912}]}`, 0},
	} {
		t.Run(c.key+"/"+strconv.Itoa(c.rank), func(t *testing.T) {
			body, err := json.Marshal(c.ev.Payload)
			if err != nil {
				t.Fatal(err)
			}
			apitest.ValidateWebhook(t, body)
			if string(body) != c.body {
				t.Errorf("body\n got %s\nwant %s", body, c.body)
			}
			if c.ev.Key != c.key || c.ev.Rank != c.rank {
				t.Errorf("key %q rank %d, want %q %d", c.ev.Key, c.ev.Rank, c.key, c.rank)
			}
		})
	}
}
