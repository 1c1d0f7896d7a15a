package process

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// A contact's profile through the API; blocking it through the API
// (contact.blocked by api, the phone's list has it, every door refuses a
// send with contact_blocked, the audit log records it); the phone
// unblocking it (contact.blocked by phone) lets sends through again.
func TestContactProfileAndBlocks(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	// Each question and change below takes a token of CHECK_RATE: a burst
	// for them all.
	p := linkedBridge(t, sim, t.TempDir(), append(hooks.env(), "CHECK_BURST=20")...)
	contact := sim.Contact(alice, "Alice")
	contact.SetAbout("Hey there, I am using WhatsApp")
	pictureID := contact.SetPicture(false)

	var profile struct {
		About      *string `json:"about"`
		PictureID  *string `json:"picture_id"`
		PictureURL *string `json:"picture_url"`
	}
	if code, raw := apiJSON(t, p, http.MethodGet, "/api/contacts/"+alice+"/profile", "", &profile); code != http.StatusOK ||
		profile.About == nil || *profile.About != "Hey there, I am using WhatsApp" || profile.PictureID == nil ||
		*profile.PictureID != pictureID || profile.PictureURL == nil {
		t.Fatalf("profile: %d %s", code, raw)
	}

	if code, raw := apiJSON(t, p, http.MethodPost, "/api/contacts/"+alice+"/block", "", nil); code != http.StatusOK ||
		!strings.Contains(raw, `"blocked":true`) {
		t.Fatalf("block: %d %s", code, raw)
	}
	blocked := hooks.wait("contact.blocked", func(e hookEvent) bool { return e.str("event") == "contact.blocked" })
	if blocked.str("contact") != alice || blocked.str("by") != "api" || blocked.Payload["blocked"] != true ||
		blocked.str("contact_lid") != contact.LID().String() {
		t.Errorf("contact.blocked %v", blocked.Payload)
	}
	if !sim.Phone(testAccount).Blocks(contact) {
		t.Error("the phone's block list lacks the contact")
	}
	var list struct {
		Blocked []struct{ Contact string } `json:"blocked"`
	}
	if code, raw := apiJSON(t, p, http.MethodGet, "/api/blocklist", "", &list); code != http.StatusOK ||
		len(list.Blocked) != 1 || list.Blocked[0].Contact != alice {
		t.Errorf("block list: %d %s", code, raw)
	}
	refusedOnEveryDoor(t, p)
	if !auditRecords(t, p, "contact.block", alice) {
		t.Error("the audit log lacks the block")
	}

	sim.Phone(testAccount).SetBlocked(contact, false)
	hooks.wait("contact.blocked by phone", func(e hookEvent) bool {
		return e.str("event") == "contact.blocked" && e.str("by") == "phone" && e.Payload["blocked"] == false
	})
	if code, raw := sendText(t, p, alice, "unblocked"); code != http.StatusOK {
		t.Errorf("send after the phone's unblock: %d %s", code, raw)
	}
	ownProfile(t, sim, p)
}

// ownProfile changes the account's about text and picture through the API
// (the phone's profile has them, the audit log records it), reads them
// back, refuses a picture that is no JPEG, and reads the privacy settings.
func ownProfile(t *testing.T, sim *wasim.Simulator, p *bridgeProcess) {
	t.Helper()
	jpeg := base64.StdEncoding.EncodeToString([]byte{0xFF, 0xD8, 0xFF, 0xE0, 'J', 'F', 'I', 'F'})
	if code, raw := apiJSON(t, p, http.MethodPut, "/api/profile", `{"about":"Open 9-17","picture":"`+jpeg+`"}`, nil); code != http.StatusOK ||
		raw != `{"changed":["about","picture"]}`+"\n" {
		t.Fatalf("put profile: %d %q", code, raw)
	}
	phone := sim.Phone(testAccount)
	if phone.About() != "Open 9-17" || phone.Picture() == "" {
		t.Errorf("the phone's profile: %q %q", phone.About(), phone.Picture())
	}
	var own struct {
		PushName  string  `json:"push_name"`
		About     *string `json:"about"`
		PictureID *string `json:"picture_id"`
	}
	if code, raw := apiJSON(t, p, http.MethodGet, "/api/profile", "", &own); code != http.StatusOK || own.About == nil ||
		*own.About != "Open 9-17" || own.PictureID == nil || *own.PictureID != phone.Picture() {
		t.Errorf("get profile: %d %s", code, raw)
	}
	gif := base64.StdEncoding.EncodeToString([]byte("GIF89a"))
	if code, raw := apiJSON(t, p, http.MethodPut, "/api/profile", `{"picture":"`+gif+`"}`, nil); code != http.StatusBadRequest ||
		!strings.Contains(raw, "invalid_picture") {
		t.Errorf("a GIF: %d %s", code, raw)
	}
	if !auditRecords(t, p, "profile.update", "about, picture") {
		t.Error("the audit log lacks the profile's change")
	}
	var privacy map[string]string
	if code, raw := apiJSON(t, p, http.MethodGet, "/api/profile/privacy", "", &privacy); code != http.StatusOK || privacy["groupadd"] == "" {
		t.Errorf("privacy: %d %s", code, raw)
	}
}

// refusedOnEveryDoor sends to the blocked contact through POST /send, POST
// /api/messages and the Cloud door: each refuses with contact_blocked.
func refusedOnEveryDoor(t *testing.T, p *bridgeProcess) {
	t.Helper()
	if code, raw := sendText(t, p, alice, "form"); code != http.StatusConflict || !strings.Contains(raw, "contact_blocked") {
		t.Errorf("POST /send: %d %s", code, raw)
	}
	body := `{"to":"` + alice + `","type":"text","text":"json"}`
	if code, raw := apiJSON(t, p, http.MethodPost, "/api/messages", body, nil); code != http.StatusConflict ||
		!strings.Contains(raw, "contact_blocked") {
		t.Errorf("POST /api/messages: %d %s", code, raw)
	}
	cloud, _ := json.Marshal(map[string]any{"messaging_product": "whatsapp", "to": alice, "type": "text", "text": map[string]string{"body": "cloud"}})
	if code, raw := cloudCall(t, p, http.MethodPost, "/"+cloudVersion+"/"+testAccount+"/messages", "application/json", cloud, testAPIKey); code != http.StatusBadRequest ||
		!strings.Contains(string(raw), "contact_blocked") {
		t.Errorf("cloud door: %d %s", code, raw)
	}
}

// auditRecords reports whether this week's audit log records action with
// detail, successful.
func auditRecords(t *testing.T, p *bridgeProcess, action, detail string) bool {
	t.Helper()
	var records []struct{ Action, Outcome, Detail string }
	if code, raw := request(t, http.MethodGet, "http://"+p.addr+"/api/admin/audit", testAdminToken, "", "", &records); code != http.StatusOK {
		t.Fatalf("audit: %d %s", code, raw)
	}
	for _, r := range records {
		if r.Action == action && r.Detail == detail && r.Outcome == "success" {
			return true
		}
	}
	return false
}
