package apitest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/internal/apitest"
)

func TestValidateWebhook(t *testing.T) {
	const (
		status  = `{"event":"message.status","whatsapp_id":"3EB0","status":"Delivered","recipient":"4915123456789","timestamp":"2026-11-21T10:00:01.250Z"}`
		upsert  = `{"event":"message.upsert","whatsapp_id":"3A1F","from":"4915123456789","chat":"4915123456789","push_name":"Ana","type":"image","text":"","timestamp":"2026-11-21T10:00:00.000Z","media":{"mimetype":"image/jpeg","size":10,"file_name":""},"from_lid":null,"from_phone":"4915123456789"}`
		session = `{"event":"session.status","state":"disconnected","reason":"stream_replaced","timestamp":"2026-11-21T10:00:00.000Z"}`
	)
	for _, tc := range []struct{ name, body, want string }{
		{"message.status", status, ""},
		{"message.upsert", upsert, ""},
		{"message.upsert without media", strings.Replace(upsert, `,"media":{"mimetype":"image/jpeg","size":10,"file_name":""}`, "", 1), ""},
		{"session.status", session, ""},
		{"extra field", strings.Replace(status, `"status":"Delivered"`, `"status":"Delivered","extra":true`, 1), "extra"},
		{"undocumented status", strings.Replace(status, "Delivered", "Queued", 1), "status"},
		{"unknown reason", strings.Replace(session, "stream_replaced", "gremlins", 1), "reason"},
		{"timestamp without milliseconds", strings.Replace(session, ".000Z", "Z", 1), "timestamp"},
		{"media field missing", strings.Replace(upsert, `,"file_name":""`, "", 1), "file_name"},
		{"unknown event", `{"event":"message.deleted"}`, "not in the API description"},
		{"no event", `{"whatsapp_id":"x"}`, "without an \"event\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeT{name: t.Name()}
			apitest.ValidateWebhook(ft, []byte(tc.body))
			got := ft.reported()
			if got != "" {
				t.Log(got)
			}
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("reported %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateWebhookRequestHeaders(t *testing.T) {
	body := []byte(`{"event":"session.status","state":"connected","reason":"","timestamp":"2026-11-21T10:00:00.000Z"}`)
	good := http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {"1763719200"}, "Webhook-Signature": {"v1,abc="}}
	for _, tc := range []struct {
		name   string
		header http.Header
		want   string
	}{
		{"standard webhooks", good, ""},
		{"unsigned (no WEBHOOK_SECRET)", http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {"1763719200"}}, ""},
		{"signature not v1", http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {"1763719200"}, "Webhook-Signature": {"abc="}}, "webhook-signature"},
		{"no id", http.Header{"Webhook-Timestamp": {"1763719200"}, "Webhook-Signature": {"v1,abc="}}, "webhook-id"},
		{"timestamp not unix seconds", http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {"2026-11-21"}, "Webhook-Signature": {"v1,abc="}}, "webhook-timestamp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeT{name: t.Name()}
			r, _ := http.NewRequest(http.MethodPost, "http://receiver.test/", nil)
			r.Header = tc.header
			apitest.ValidateWebhookRequest(ft, r, body)
			got := ft.reported()
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("reported %q, want %q", got, tc.want)
			}
		})
	}
}
