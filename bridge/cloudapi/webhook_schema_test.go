package cloudapi

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/openapi"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// schemaOf is component name of the OpenAPI document doc.
func schemaOf(t *testing.T, doc []byte, name string) *base.Schema {
	t.Helper()
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	model, err := d.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	proxy := model.Model.Components.Schemas.GetOrZero(name)
	if proxy == nil {
		t.Fatalf("no schema %s", name)
	}
	return proxy.Schema()
}

// everyWebhook is one event of every kind the cloud format sends: each
// message type, from a number and from a hidden number, in a chat and in
// a group, and each status.
func everyWebhook() map[string]webhook.Event {
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	alice := bridge.PhoneRecipient("4915100000002")
	lid := bridge.Recipient{Kind: bridge.RecipientLID, ID: "123456789012345"}
	group := bridge.Recipient{Kind: bridge.RecipientGroup, ID: "120363025246125486"}
	in := func(typ string, fill func(*bridge.Incoming)) bridge.Incoming {
		m := bridge.Incoming{WhatsAppID: "3A0" + typ, From: alice, FromPhone: alice, FromLID: lid, Chat: alice, PushName: "Alice",
			Type: typ, Timestamp: at}
		if fill != nil {
			fill(&m)
		}
		return m
	}
	media := func(mime string) func(*bridge.Incoming) {
		return func(m *bridge.Incoming) {
			m.Media = &bridge.Media{ID: "med_0123456789abcdef0123456789abcdef", MimeType: mime, SHA256: "ab", FileName: "f"}
		}
	}
	out := map[string]webhook.Event{
		"text":     webhook.MessageUpsert(in("text", func(m *bridge.Incoming) { m.Text = "hi"; m.Quoted = "3EB0AA" })),
		"image":    webhook.MessageUpsert(in("image", media("image/jpeg"))),
		"video":    webhook.MessageUpsert(in("video", media("video/mp4"))),
		"voice":    webhook.MessageUpsert(in("audio", func(m *bridge.Incoming) { media("audio/ogg")(m); m.Media.PTT = true })),
		"document": webhook.MessageUpsert(in("document", media("application/pdf"))),
		"sticker":  webhook.MessageUpsert(in("sticker", media("image/webp"))),
		"location": webhook.MessageUpsert(in("location", func(m *bridge.Incoming) {
			m.Location = &bridge.Location{Latitude: 1.5, Longitude: 2.5}
		})),
		"contacts": webhook.MessageUpsert(in("contact", func(m *bridge.Incoming) {
			m.Contacts = []bridge.ContactCard{{DisplayName: "Bob", VCard: "BEGIN:VCARD"}}
		})),
		"reaction": webhook.MessageUpsert(in(bridge.IncomingReaction, func(m *bridge.Incoming) { m.TargetID, m.Emoji = "3EB0AA", "👍" })),
		"button_reply": webhook.MessageUpsert(in(bridge.IncomingButtonReply, func(m *bridge.Incoming) {
			m.ReplyID, m.Text, m.Quoted = "yes", "Yes", "3EB0BB"
		})),
		"list_reply": webhook.MessageUpsert(in(bridge.IncomingListReply, func(m *bridge.Incoming) {
			m.ReplyID, m.Text, m.Quoted = "row-1", "Tea", "3EB0BC"
		})),
		"hidden number in a group": webhook.MessageUpsert(in("text", func(m *bridge.Incoming) {
			m.From, m.FromPhone, m.Chat, m.Text = lid, bridge.Recipient{}, group, "psst"
		})),
		"sent":            webhook.MessageStatus("3EB0AA", alice, bridge.StatusSent, at),
		"delivered":       webhook.MessageStatus("3EB0AA", alice, bridge.StatusDelivered, at),
		"read":            webhook.MessageStatus("3EB0AA", lid, bridge.StatusRead, at),
		"read in a group": webhook.MessageStatus("3EB0AA", group, bridge.StatusRead, at),
		"failed": webhook.MessageStatusOf(bridge.Message{WhatsAppID: "3EB0AA", Recipient: alice, Status: bridge.StatusFailed,
			LastError: bridge.FailNotOnWhatsApp, UpdatedAt: at}),
	}
	return out
}

// Item 1: every webhook of the cloud format is what Meta documents, with
// every field pywa 4 and whatsapp-api-js read (testdata/meta_webhook.yaml:
// contacts[0].user_id on every message and status, recipient_user_id on a
// status), and what the bridge's own API description says (CloudWebhook).
func TestWebhooksMatchMetaSchema(t *testing.T) {
	meta, err := os.ReadFile("testdata/meta_webhook.yaml")
	if err != nil {
		t.Fatal(err)
	}
	metaSchema := schemaOf(t, meta, "Webhook")
	ownSchema := schemaOf(t, openapi.JSON(), "CloudWebhook")
	v := schema_validation.NewSchemaValidator()
	for name, ev := range everyWebhook() {
		body, _, err := Encode(testAccount, ev, testSecret)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for schema, s := range map[string]*base.Schema{"Meta's": metaSchema, "the API description's": ownSchema} {
			if ok, errs := v.ValidateSchemaBytes(s, body); !ok {
				for _, e := range errs {
					for _, se := range e.SchemaValidationErrors {
						t.Errorf("%s breaks %s schema: %s", name, schema, se.Reason)
					}
					t.Errorf("%s breaks %s schema: %s", name, schema, e.Message)
				}
				t.Logf("body: %s", body)
			}
		}
	}
}

// Item 1: a contact's user id is one on its messages, on the statuses of
// what is sent to it, and in the send's answer: from its number whenever
// the event names one.
func TestUserIDAgreesAcrossWebhooks(t *testing.T) {
	hooks := everyWebhook()
	value := func(name string) value {
		body, _, err := Encode(testAccount, hooks[name], testSecret)
		if err != nil {
			t.Fatal(err)
		}
		var env envelope
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatal(err)
		}
		return env.Entry[0].Changes[0].Value
	}
	msg, st := value("text"), value("delivered")
	want := defaultUserIDs.For(bridge.PhoneRecipient("4915100000002"))
	if msg.Contacts[0].UserID != want || msg.Messages[0].FromUserID != want || msg.Contacts[0].WaID != "4915100000002" {
		t.Errorf("message contact %+v, from_user_id %q; want %s", msg.Contacts[0], msg.Messages[0].FromUserID, want)
	}
	if len(st.Contacts) != 1 || st.Contacts[0].UserID != want || st.Statuses[0].RecipientUserID != want || st.Contacts[0].WaID != "4915100000002" {
		t.Errorf("status contacts %+v, status %+v; want %s", st.Contacts, st.Statuses[0], want)
	}
	hidden := value("hidden number in a group")
	if lidID := defaultUserIDs.For(bridge.Recipient{Kind: bridge.RecipientLID, ID: "123456789012345"}); hidden.Contacts[0].UserID != lidID ||
		hidden.Contacts[0].WaID != "" || value("read").Statuses[0].RecipientUserID != lidID {
		t.Errorf("hidden number: %+v", hidden.Contacts[0])
	}
	if tap := value("button_reply").Messages[0]; tap.Context == nil || tap.Context.From != testAccount {
		t.Errorf("a tap's context %+v: from is the account, whose message offered the buttons", tap.Context)
	}
}
