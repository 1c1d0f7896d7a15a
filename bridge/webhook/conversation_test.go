package webhook

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/apitest"
)

// Issue 14's events and fields, as receivers see them.
func TestConversationPayloads(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	phone := bridge.PhoneRecipient("4915112345678")
	lid := bridge.Recipient{Kind: bridge.RecipientLID, ID: "99887766"}
	base := bridge.Incoming{WhatsAppID: "W", From: lid, FromLID: lid, Chat: lid, PushName: "Ana", Timestamp: at}
	with := func(f func(*bridge.Incoming)) bridge.Incoming {
		in := base
		f(&in)
		return in
	}
	head := `"whatsapp_id":"W","from":"99887766@lid","chat":"99887766@lid","push_name":"Ana",`
	for _, c := range []struct {
		name, typ, body string
		in              bridge.Incoming
	}{
		{"hidden number", TypeMessageUpsert, `{"event":"message.upsert",` + head + `"type":"text","text":"hi","timestamp":"2026-11-21T10:00:00.000Z","from_lid":"99887766@lid","from_phone":null,"quoted":"Q1","mentions":["4915112345678","99887766@lid"]}`,
			with(func(in *bridge.Incoming) {
				in.Type, in.Text, in.Quoted, in.Mentions = "text", "hi", "Q1", []bridge.Recipient{phone, lid}
			})},
		{"voice note with its media id", TypeMessageUpsert, `{"event":"message.upsert",` + head + `"type":"audio","text":"","timestamp":"2026-11-21T10:00:00.000Z","media":{"mimetype":"audio/ogg","size":3,"file_name":"","id":"med_0123456789abcdef0123456789abcdef","url":"/api/media/med_0123456789abcdef0123456789abcdef","sha256":"abababababababababababababababababababababababababababababababab","ptt":true},"from_lid":"99887766@lid","from_phone":"4915112345678"}`,
			with(func(in *bridge.Incoming) {
				in.Type, in.FromPhone = "audio", phone
				in.Media = &bridge.Media{ID: "med_0123456789abcdef0123456789abcdef", MimeType: "audio/ogg", Size: 3, SHA256: "abababababababababababababababababababababababababababababababab", PTT: true, Source: []byte{1}}
			})},
		{"location", TypeMessageUpsert, `{"event":"message.upsert",` + head + `"type":"location","text":"","timestamp":"2026-11-21T10:00:00.000Z","from_lid":"99887766@lid","from_phone":null,"location":{"latitude":52.5,"longitude":13.4,"name":"Berlin"}}`,
			with(func(in *bridge.Incoming) {
				in.Type, in.Location = "location", &bridge.Location{Latitude: 52.5, Longitude: 13.4, Name: "Berlin"}
			})},
		{"contact card", TypeMessageUpsert, `{"event":"message.upsert",` + head + `"type":"contact","text":"","timestamp":"2026-11-21T10:00:00.000Z","from_lid":"99887766@lid","from_phone":null,"contacts":[{"display_name":"Carol","vcard":"BEGIN:VCARD"}]}`,
			with(func(in *bridge.Incoming) {
				in.Type, in.Contacts = "contact", []bridge.ContactCard{{DisplayName: "Carol", VCard: "BEGIN:VCARD"}}
			})},
		{"reaction removed", TypeMessageReaction, `{"event":"message.reaction","whatsapp_id":"W","target_id":"T","from":"99887766@lid","from_lid":"99887766@lid","from_phone":null,"chat":"99887766@lid","push_name":"Ana","timestamp":"2026-11-21T10:00:00.000Z","emoji":""}`,
			with(func(in *bridge.Incoming) { in.Type, in.TargetID = bridge.IncomingReaction, "T" })},
		{"edit", TypeMessageEdit, `{"event":"message.edit","whatsapp_id":"W","target_id":"T","from":"99887766@lid","from_lid":"99887766@lid","from_phone":null,"chat":"99887766@lid","push_name":"Ana","timestamp":"2026-11-21T10:00:00.000Z","text":"new"}`,
			with(func(in *bridge.Incoming) { in.Type, in.TargetID, in.Text = bridge.IncomingEdit, "T", "new" })},
		{"revoke", TypeMessageRevoke, `{"event":"message.revoke","whatsapp_id":"W","target_id":"T","from":"99887766@lid","from_lid":"99887766@lid","from_phone":null,"chat":"99887766@lid","push_name":"Ana","timestamp":"2026-11-21T10:00:00.000Z"}`,
			with(func(in *bridge.Incoming) { in.Type, in.TargetID = bridge.IncomingRevoke, "T" })},
		{"poll vote", TypeMessagePollVote, `{"event":"message.poll_vote","whatsapp_id":"W","target_id":"T","from":"99887766@lid","from_lid":"99887766@lid","from_phone":null,"chat":"99887766@lid","push_name":"Ana","timestamp":"2026-11-21T10:00:00.000Z","options":["Mon","Wed"]}`,
			with(func(in *bridge.Incoming) {
				in.Type, in.TargetID, in.Votes = bridge.IncomingPollVote, "T", []string{"Mon", "Wed"}
			})},
		{"button tapped", TypeMessageUpsert, `{"event":"message.upsert",` + head + `"type":"button_reply","text":"Tomorrow","timestamp":"2026-11-21T10:00:00.000Z","from_lid":"99887766@lid","from_phone":null,"quoted":"Q1","reply_id":"order-17:no"}`,
			with(func(in *bridge.Incoming) {
				in.Type, in.Text, in.Quoted, in.ReplyID = bridge.IncomingButtonReply, "Tomorrow", "Q1", "order-17:no"
			})},
		{"poll vote taken back", TypeMessagePollVote, `{"event":"message.poll_vote","whatsapp_id":"W","target_id":"T","from":"99887766@lid","from_lid":"99887766@lid","from_phone":null,"chat":"99887766@lid","push_name":"Ana","timestamp":"2026-11-21T10:00:00.000Z","options":[]}`,
			with(func(in *bridge.Incoming) { in.Type, in.TargetID = bridge.IncomingPollVote, "T" })},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := MessageUpsert(c.in)
			body, err := json.Marshal(ev.Payload)
			if err != nil {
				t.Fatal(err)
			}
			apitest.ValidateWebhook(t, body)
			if ev.Type != c.typ || ev.Key != "chat:99887766@lid" || string(body) != c.body {
				t.Errorf("%s %s\n got %s\nwant %s", ev.Type, ev.Key, body, c.body)
			}
		})
	}
}
