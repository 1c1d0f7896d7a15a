package process

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/apitest"
)

// groupCall sends a group request with the API key and, when key is set,
// an Idempotency-Key; it decodes a JSON answer into out.
func groupCall(t *testing.T, p *bridgeProcess, method, path, contentType, body, key string, out any) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+p.addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", testAPIKey)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := apitest.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, string(raw)
}

type memberResult struct {
	Participant, Outcome string
	Phone, LID           *string
}

type groupInfoAnswer struct {
	ID, Subject, Description string
	Participants             []struct {
		Phone, LID *string
		Admin      bool
	}
}

// Group administration through the API, end to end: the bridge process,
// the real whatsmeow client, the simulator's groups, and the webhooks.
func TestGroupsThroughTheAPI(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := linkedBridge(t, sim, t.TempDir(), append(hooks.env(), "GROUP_ACTION_RATE=100/s")...)
	ana, bob, carol := sim.Contact(alice, "Alice"), sim.Contact("4915100000003", "Bob"), sim.Contact("4915100000004", "Carol")
	carol.RefuseGroupAdds(true)

	var created struct {
		Group        groupInfoAnswer
		Participants []memberResult
	}
	body := `{"subject":"Ops","participants":["` + alice + `","` + carol.Number() + `"]}`
	code, first := groupCall(t, p, "POST", "/api/groups", "application/json", body, "create-1", &created)
	if code != http.StatusCreated || created.Participants[0].Outcome != "done" || created.Participants[1].Outcome != "privacy_refused" {
		t.Fatalf("create: %d %s", code, first)
	}
	// The same key answers the same, and WhatsApp is not asked again.
	if code, again := groupCall(t, p, "POST", "/api/groups", "application/json", body, "create-1", nil); code != http.StatusCreated || again != first || len(sim.Groups()) != 1 {
		t.Fatalf("repeat: %d %s, %d groups", code, again, len(sim.Groups()))
	}
	if code, raw := groupCall(t, p, "POST", "/api/groups", "application/json", `{"subject":"Other","participants":["`+alice+`"]}`, "create-1", nil); code != http.StatusConflict || !strings.Contains(raw, "idempotency_key_reused") {
		t.Fatalf("key reused: %d %s", code, raw)
	}
	gid := created.Group.ID
	path := "/api/groups/" + gid
	hooks.wait("the create", func(e hookEvent) bool {
		return e.str("event") == "group.participants" && e.str("group") == gid && e.str("reason") == "create"
	})

	var added struct{ Participants []memberResult }
	if code, raw := groupCall(t, p, "POST", path+"/participants", "application/json", `{"action":"add","participants":["`+bob.Number()+`","4915199999999"]}`, "", &added); code != http.StatusOK ||
		added.Participants[0].Outcome != "done" || *added.Participants[0].LID != bob.LID().String() || added.Participants[1].Outcome != "not_on_whatsapp" {
		t.Fatalf("add: %d %s", code, raw)
	}
	hooks.wait("bob's add", func(e hookEvent) bool {
		return e.str("event") == "group.participants" && e.str("action") == "add" && e.str("by") == testAccount && e.str("reason") == ""
	})
	if code, raw := groupCall(t, p, "PATCH", path, "application/json", `{"subject":"Ops team","description":"on call"}`, "", nil); code != http.StatusNoContent {
		t.Fatalf("update: %d %s", code, raw)
	}
	hooks.wait("the new subject", func(e hookEvent) bool { return e.str("event") == "group.update" && e.str("subject") == "Ops team" })
	g, _ := sim.LookupGroup(sim.Groups()[0].JID())
	g.SetSubject(ana, "Alice renamed it")
	hooks.wait("alice's rename", func(e hookEvent) bool { return e.str("subject") == "Alice renamed it" && e.str("by") == alice })

	jpeg := "\xff\xd8\xff\xe0photo"
	if code, raw := groupCall(t, p, "PUT", path+"/photo", "image/jpeg", jpeg, "", nil); code != http.StatusOK || g.PhotoID() == "" {
		t.Fatalf("photo: %d %s", code, raw)
	}
	hooks.wait("the photo", func(e hookEvent) bool { return e.str("event") == "group.update" && e.str("photo") == "set" })
	if code, raw := groupCall(t, p, "DELETE", path+"/photo", "", "", "", nil); code != http.StatusNoContent || g.PhotoID() != "" {
		t.Fatalf("photo removed: %d %s", code, raw)
	}
	var info groupInfoAnswer
	if code, raw := groupCall(t, p, "GET", path, "", "", "", &info); code != http.StatusOK || info.Description != "on call" || len(info.Participants) != 3 {
		t.Fatalf("info: %d %s", code, raw)
	}
	var link, fresh struct{ Link string }
	groupCall(t, p, "GET", path+"/invite-link", "", "", "", &link)
	if code, raw := groupCall(t, p, "DELETE", path+"/invite-link", "", "", "", &fresh); code != http.StatusOK || fresh.Link == link.Link || !strings.HasSuffix(fresh.Link, g.InviteCode()) {
		t.Fatalf("revoke: %d %s", code, raw)
	}
	testGroupRefusals(t, sim, p, ana, link.Link)
}

// What the account may not do is refused as such, and joining and leaving
// work through links.
func testGroupRefusals(t *testing.T, sim *wasim.Simulator, p *bridgeProcess, ana *wasim.User, revoked string) {
	t.Helper()
	theirs := sim.CreateGroup("Alice's", ana, sim.Phone(testAccount))
	if code, raw := groupCall(t, p, "POST", "/api/groups/"+theirs.JID().String()+"/participants", "application/json", `{"action":"remove","participants":["`+alice+`"]}`, "", nil); code != http.StatusForbidden || !strings.Contains(raw, "not_group_admin") {
		t.Fatalf("remove as a member: %d %s", code, raw)
	}
	if code, raw := groupCall(t, p, "POST", "/api/groups/join", "application/json", `{"link":"`+revoked+`"}`, "", nil); code != http.StatusNotFound || !strings.Contains(raw, "invite_link_revoked") {
		t.Fatalf("revoked link: %d %s", code, raw)
	}
	open := sim.CreateGroup("Open", ana)
	var joined struct{ Group string }
	if code, raw := groupCall(t, p, "POST", "/api/groups/join", "application/json", `{"link":"https://chat.whatsapp.com/`+open.InviteCode()+`"}`, "", &joined); code != http.StatusOK || joined.Group != open.JID().String() {
		t.Fatalf("join: %d %s", code, raw)
	}
	if code, raw := groupCall(t, p, "POST", "/api/groups/"+open.JID().String()+"/leave", "", "", "", nil); code != http.StatusNoContent || len(open.Members()) != 1 {
		t.Fatalf("leave: %d %s", code, raw)
	}
	for _, c := range []struct{ method, path, body, code string }{
		{"POST", "/api/groups", `{"subject":" ","participants":["` + alice + `"]}`, "invalid_subject"},
		{"POST", "/api/groups", `{"subject":"x","participants":["1","2","3","4","5","6"]}`, "too_many_participants"},
		{"GET", "/api/groups/4915100000002", "", "invalid_group"},
		{"POST", "/api/groups/" + open.JID().String() + "/participants", `{"action":"kick","participants":["` + alice + `"]}`, "invalid_action"},
		{"POST", "/api/groups/join", `{"link":"https://example.com/x"}`, "invalid_invite_link"},
	} {
		ct := ""
		if c.body != "" {
			ct = "application/json"
		}
		if code, raw := groupCall(t, p, c.method, c.path, ct, c.body, "", nil); code != http.StatusBadRequest || !strings.Contains(raw, c.code) {
			t.Errorf("%s %s: %d %s, want %s", c.method, c.path, code, raw, c.code)
		}
	}
	var records []struct{ Action, Outcome string }
	request(t, http.MethodGet, "http://"+p.addr+"/api/admin/audit", testAdminToken, "", "", &records)
	audited := map[string]bool{}
	for _, r := range records {
		audited[r.Action+" "+r.Outcome] = true
	}
	for _, want := range []string{"group.create success", "group.members success", "group.members rejected", "group.join success", "group.leave success"} {
		if !audited[want] {
			t.Errorf("no audit record %q in %v", want, audited)
		}
	}
}
