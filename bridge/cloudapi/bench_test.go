package cloudapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/webhook"
)

// BenchmarkEncode: Cloud webhooks encoded (and signed) per second from a
// received text's event; "standard" is the baseline in the same run, the
// bridge's own body of the same event (json.Marshal, as the outbox does).
//
//	go test -run=NONE -bench=Encode -benchtime=200000x ./bridge/cloudapi
func BenchmarkEncode(b *testing.B) {
	alice := bridge.PhoneRecipient("4915100000002")
	ev := webhook.MessageUpsert(bridge.Incoming{WhatsAppID: "3A0123", From: alice, FromPhone: alice, Chat: alice,
		PushName: "Alice", Type: "text", Text: "hello, is the order ready?", Timestamp: time.Now()})
	b.Run("standard", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(ev.Payload); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cloud", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := Encode(testAccount, ev, testSecret); err != nil {
				b.Fatal(err)
			}
		}
	})
}
