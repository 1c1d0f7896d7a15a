package process

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// cloudValue is the part of a Cloud webhook this test reads.
type cloudValue struct {
	Contacts []struct {
		WaID   string `json:"wa_id"`
		UserID string `json:"user_id"`
	} `json:"contacts"`
	Messages []struct {
		ID         string `json:"id"`
		FromUserID string `json:"from_user_id"`
	} `json:"messages"`
	Statuses []struct {
		ID              string `json:"id"`
		Status          string `json:"status"`
		RecipientUserID string `json:"recipient_user_id"`
	} `json:"statuses"`
}

// next waits for the Cloud webhook that match accepts.
func (c *cloudReceiver) next(what string, match func(cloudValue) bool) cloudValue {
	c.t.Helper()
	return await(c, what, match)
}

// Issue 42 items 1 and 8, end to end: a cloud subscription signed with a
// raw Meta app secret; a contact's message names it by user id, a send to
// that user id (recipient, as pywa sends it) reaches the contact, and the
// send's statuses carry the same user id in contacts[0] and
// recipient_user_id.
func TestCloudUserIDRoundTrip(t *testing.T) {
	sim := wasim.Start(t)
	p := linkedBridge(t, sim, t.TempDir())
	contact := sim.Contact(alice, "Alice")
	contact.SetReceiptMode(wasim.ReceiptsRead)
	const appSecret = "0123456789abcdef0123456789abcdef" // as Meta's dashboard shows an app secret
	cloud := newCloudReceiver(t, []byte(appSecret), "pywa-verify")
	sub := `{"id":"pywa","target":"` + cloud.srv.URL + `/","format":"cloud","events":["message.upsert","message.status"],"secret":"` +
		appSecret + `","credentials":{"token":"pywa-verify"}}`
	if code, raw := request(t, http.MethodPost, "http://"+p.addr+"/api/admin/subscriptions", testAdminToken, "application/json", sub, nil); code != http.StatusCreated {
		t.Fatalf("a cloud subscription with a raw app secret: %d %s", code, raw)
	}
	in := writeTo(t, contact, "hello")
	got := cloud.next("message "+in, func(v cloudValue) bool { return len(v.Messages) == 1 && v.Messages[0].ID == in })
	if len(got.Contacts) != 1 || got.Contacts[0].UserID == "" || got.Contacts[0].WaID != alice || got.Messages[0].FromUserID != got.Contacts[0].UserID {
		t.Fatalf("the message's contact: %+v", got)
	}
	userID := got.Contacts[0].UserID
	var sent cloudSent
	body := `{"messaging_product":"whatsapp","recipient_type":"individual","recipient":"` + userID + `","type":"text","text":{"body":"hi by user id"}}`
	code, raw := cloudCall(t, p, http.MethodPost, "/v22.0/"+testAccount+"/messages", "application/json", []byte(body), testAPIKey)
	if code != http.StatusOK || json.Unmarshal(raw, &sent) != nil || len(sent.Messages) != 1 || sent.Contacts[0].WaID != alice {
		t.Fatalf("a send to the user id: %d %s", code, raw)
	}
	if m := receive(t, contact, sent.Messages[0].ID); m == nil {
		t.Fatal("the contact never got the message")
	}
	st := cloud.next("the read status of "+sent.Messages[0].ID, func(v cloudValue) bool {
		return len(v.Statuses) == 1 && v.Statuses[0].ID == sent.Messages[0].ID && v.Statuses[0].Status == "read"
	})
	if len(st.Contacts) != 1 || st.Contacts[0].UserID != userID || st.Statuses[0].RecipientUserID != userID || st.Contacts[0].WaID != alice {
		t.Errorf("the status names the contact as %+v, want user id %s", st, userID)
	}
}

// A contact first writes hiding its number, so its Cloud user id comes
// from its LID; when it later shows its number, and after a restart, its
// messages and the statuses of a send to its number keep that user id.
// The restart also shows that a cloud subscription made through the admin
// API delivers again at once (its format was once unknown at start-up).
func TestCloudUserIDSurvivesTheNumber(t *testing.T) {
	sim := wasim.Start(t)
	dataDir := t.TempDir()
	p := linkedBridge(t, sim, dataDir)
	contact := sim.Contact(alice, "Alice")
	contact.SetReceiptMode(wasim.ReceiptsRead)
	const appSecret = "fedcba9876543210fedcba9876543210"
	cloud := newCloudReceiver(t, []byte(appSecret), "verify")
	subscribe := func(p *bridgeProcess) {
		sub := `{"id":"crm","target":"` + cloud.srv.URL + `/","format":"cloud","events":["message.upsert","message.status"],"secret":"` +
			appSecret + `","credentials":{"token":"verify"}}`
		code, raw := request(t, http.MethodPost, "http://"+p.addr+"/api/admin/subscriptions", testAdminToken, "application/json", sub, nil)
		if code != http.StatusCreated && code != http.StatusOK && code != http.StatusConflict {
			t.Fatalf("the cloud subscription: %d %s", code, raw)
		}
	}
	subscribe(p)
	userIDOf := func(mode wasim.Addressing, text string) string {
		contact.SetAddressing(mode)
		id := writeTo(t, contact, text)
		got := cloud.next("message "+id, func(v cloudValue) bool { return len(v.Messages) == 1 && v.Messages[0].ID == id })
		return got.Contacts[0].UserID
	}
	hidden := userIDOf(wasim.AddressLIDHidden, "who am I")
	if hidden == "" {
		t.Fatal("no user id for a hidden number")
	}
	if shown := userIDOf(wasim.AddressLIDWithPhone, "it's Alice"); shown != hidden {
		t.Errorf("once the number shows, the user id is %s, was %s", shown, hidden)
	}
	p.kill()
	p = startBridge(t, simBridgeBin, simEnv(sim, dataDir))
	waitAdminState(t, p, "reconnected", connected)
	if again := userIDOf(wasim.AddressLIDWithPhone, "still me"); again != hidden {
		t.Errorf("after a restart the user id is %s, was %s", again, hidden)
	}
	sent := cloudSend(t, p, map[string]any{"to": alice, "type": "text", "text": map[string]any{"body": "to your number"}})
	st := cloud.next("the read status of "+sent, func(v cloudValue) bool {
		return len(v.Statuses) == 1 && v.Statuses[0].ID == sent && v.Statuses[0].Status == "read"
	})
	if st.Statuses[0].RecipientUserID != hidden || st.Contacts[0].UserID != hidden {
		t.Errorf("a send to the number: status %+v, want user id %s", st, hidden)
	}
}
