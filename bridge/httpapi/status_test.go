package httpapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/httpapi/messaging"
)

// A status post through POST /api/messages: to status@broadcast with its
// audience and style, queued and logged like any message (the log shows
// status@broadcast), idempotent under its key.
func TestPostStatus(t *testing.T) {
	e := newJSONEnv(t)
	body := `{"to":"status@broadcast","type":"text","text":"Open on Sunday","status":{"recipients":["+49 151 0000 0003","4915100000004"],"background_color":"#1E88E5","font":"system_bold"}}`
	status, raw := e.post(t, body, "Idempotency-Key: status-1")
	var resp messaging.SendResponseJSON
	if err := json.Unmarshal([]byte(raw), &resp); status != http.StatusOK || err != nil || len(resp.Messages) != 1 {
		t.Fatalf("post: %d %s", status, raw)
	}
	if again, raw2 := e.post(t, body, "Idempotency-Key: status-1"); again != status || raw2 != raw {
		t.Errorf("the repeat answered %d %s", again, raw2)
	}
	sent := e.sender.outgoing()
	font := bridge.StatusFonts["system_bold"]
	want := &bridge.StatusPost{Recipients: []bridge.Recipient{bridge.PhoneRecipient("4915100000003"), bridge.PhoneRecipient("4915100000004")},
		BackgroundARGB: 0xFF1E88E5, Font: &font}
	if len(sent) != 1 || sent[0].Recipient != bridge.StatusBroadcast || sent[0].Text != "Open on Sunday" || !reflect.DeepEqual(sent[0].Status, want) {
		t.Fatalf("sent %+v", sent)
	}
	status, raw = call(t, http.MethodGet, e.base+"/api/messages/"+resp.Messages[0].ID, nil, "X-Api-Key: "+testAPIKey)
	var m messaging.MessageJSON
	if err := json.Unmarshal([]byte(raw), &m); status != http.StatusOK || err != nil || m.Recipient != "status@broadcast" || m.Type != "text" {
		t.Errorf("the log: %d %s", status, raw)
	}
}
