package process

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/testutil"
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

	// Unblocked through the API and blocked again, then unblocked on the
	// phone: each announced with where it came from.
	if code, raw := apiJSON(t, p, http.MethodDelete, "/api/contacts/"+alice+"/block", "", nil); code != http.StatusOK ||
		!strings.Contains(raw, `"blocked":false`) {
		t.Fatalf("unblock: %d %s", code, raw)
	}
	hooks.wait("contact.blocked unblocked by the api", func(e hookEvent) bool {
		return e.str("event") == "contact.blocked" && e.str("by") == "api" && e.Payload["blocked"] == false
	})
	if code, raw := apiJSON(t, p, http.MethodPost, "/api/contacts/"+alice+"/block", "", nil); code != http.StatusOK {
		t.Fatalf("block again: %d %s", code, raw)
	}
	if !sim.Phone(testAccount).Blocks(contact) {
		t.Error("the phone's block list lacks the contact blocked again")
	}
	sim.Phone(testAccount).SetBlocked(contact, false)
	hooks.wait("contact.blocked by phone", func(e hookEvent) bool {
		return e.str("event") == "contact.blocked" && e.str("by") == "phone" && e.Payload["blocked"] == false
	})
	if code, raw := sendText(t, p, alice, "unblocked"); code != http.StatusOK {
		t.Errorf("send after the phone's unblock: %d %s", code, raw)
	}
	ownProfile(t, sim, p)
	pushName(t, sim, p)
}

// pushName changes the account's push name through the API: refused with
// app_state_unavailable until the phone shared its app state keys; the
// phone's own change shows in GET /api/profile; the bridge's change
// reaches the phone's app state (the name contacts see), GET /api/profile
// shows it, and the audit log records it. A name WhatsApp would not show
// is refused with invalid_push_name.
func pushName(t *testing.T, sim *wasim.Simulator, p *bridgeProcess) {
	t.Helper()
	ctx, phone := wasimtest.Context(t), sim.Phone(testAccount)
	if code, raw := apiJSON(t, p, http.MethodPut, "/api/profile", `{"push_name":"Too early"}`, nil); code != http.StatusServiceUnavailable ||
		!strings.Contains(raw, "app_state_unavailable") {
		t.Fatalf("a push name before the phone shared its keys: %d %s", code, raw)
	}
	if err := phone.SetPushName(ctx, "Ana's phone"); err != nil { // shares the keys first
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, func() bool { return ownPushName(t, p) == "Ana's phone" }, "the phone's push name in GET /api/profile")
	if code, raw := apiJSON(t, p, http.MethodPut, "/api/profile", `{"push_name":"Acme Support"}`, nil); code != http.StatusOK ||
		raw != `{"changed":["push name"]}`+"\n" {
		t.Fatalf("put push name: %d %q", code, raw)
	}
	if got := phone.Name(); got != "Acme Support" {
		t.Errorf("the name contacts see: %q", got)
	}
	if got := ownPushName(t, p); got != "Acme Support" {
		t.Errorf("GET /api/profile push_name %q", got)
	}
	if code, raw := apiJSON(t, p, http.MethodPut, "/api/profile", `{"push_name":"two\nlines"}`, nil); code != http.StatusBadRequest ||
		!strings.Contains(raw, "invalid_push_name") {
		t.Errorf("a name on two lines: %d %s", code, raw)
	}
	if !auditRecords(t, p, "profile.update", "push name") {
		t.Error("the audit log lacks the push name's change")
	}
}

// ownPushName is GET /api/profile's push_name.
func ownPushName(t *testing.T, p *bridgeProcess) string {
	t.Helper()
	var own struct {
		PushName string `json:"push_name"`
	}
	if code, raw := apiJSON(t, p, http.MethodGet, "/api/profile", "", &own); code != http.StatusOK {
		t.Fatalf("get profile: %d %s", code, raw)
	}
	return own.PushName
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
