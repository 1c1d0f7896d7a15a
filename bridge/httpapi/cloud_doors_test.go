package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
)

// An Idempotency-Key keeps what its request came to, not a door's answer:
// a key first used on the JSON door and repeated on the Cloud door answers
// in Graph's shape for the same message, and the other way round; neither
// repeat sends again.
func TestIdempotencyKeyReplaysInEachDoorsShape(t *testing.T) {
	e := newCloudEnv(t, 0)
	const (
		jsonBody  = `{"to":"4915100000002","type":"text","text":"hello"}`
		graphBody = `{"messaging_product":"whatsapp","to":"4915100000002","type":"text","text":{"body":"hello"}}`
	)
	jsonSend := func(key string) (int, messaging.SendResponseJSON, string) {
		t.Helper()
		status, raw := call(t, http.MethodPost, e.base+"/api/messages", strings.NewReader(jsonBody),
			"X-API-Key: "+testAPIKey, "Content-Type: application/json", "Idempotency-Key: "+key)
		var out messaging.SendResponseJSON
		_ = json.Unmarshal([]byte(raw), &out)
		return status, out, raw
	}
	graphSend := func(key string) (int, sentBody, string) {
		t.Helper()
		status, raw := e.graph(t, http.MethodPost, "/v21.0/"+cloudAccount+"/messages", "application/json", graphBody, "Idempotency-Key: "+key)
		var out sentBody
		_ = json.Unmarshal([]byte(raw), &out)
		return status, out, raw
	}

	status, first, raw := jsonSend("json-first")
	if status != http.StatusOK || len(first.Messages) != 1 || first.Messages[0].WhatsAppID == "" {
		t.Fatalf("JSON send: %d %s", status, raw)
	}
	status, replay, raw := graphSend("json-first")
	if status != http.StatusOK || len(replay.Messages) != 1 || replay.Messages[0].ID != first.Messages[0].WhatsAppID ||
		len(replay.Contacts) != 1 || replay.Contacts[0].WaID != "4915100000002" {
		t.Fatalf("the Cloud repeat of a JSON door's key: %d %s, first %+v", status, raw, first)
	}

	status, cloudFirst, raw := graphSend("cloud-first")
	if status != http.StatusOK || len(cloudFirst.Messages) != 1 || cloudFirst.Messages[0].ID == replay.Messages[0].ID {
		t.Fatalf("Cloud send: %d %s", status, raw)
	}
	status, jsonReplay, raw := jsonSend("cloud-first")
	if status != http.StatusOK || len(jsonReplay.Messages) != 1 || jsonReplay.Messages[0].WhatsAppID != cloudFirst.Messages[0].ID ||
		jsonReplay.Messages[0].ID == "" || jsonReplay.Messages[0].Status != "Sent" {
		t.Fatalf("the JSON repeat of a Cloud door's key: %d %s, first %+v", status, raw, cloudFirst)
	}
	if n := len(e.sender.outgoing()); n != 2 {
		t.Errorf("%d messages sent for two requests and their repeats", n)
	}
}
