package process

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// Labels end to end through app state: the phone's label reaches the
// bridge (label.changed); the bridge creates a label and puts it on a
// chat through the API, and the phone reads both from app state; the
// bridge's own change is one event, not two (it is reported when WhatsApp
// took it and again when app state reads it back); the phone's label on a
// chat is label.chat; GET /api/labels shows what it all adds up to.
func TestLabelsThroughTheAPI(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := linkedBridge(t, sim, t.TempDir(), append(hooks.env(), "GROUP_ACTION_RATE=100/s")...)
	ctx := wasimtest.Context(t)
	phone, ana := sim.Phone(testAccount), sim.Contact(alice, "Ana")

	if code, raw := groupCall(t, p, "POST", "/api/labels", "application/json", `{"name":"Too early"}`, "", nil); code != http.StatusServiceUnavailable || !strings.Contains(raw, "labels_unavailable") {
		t.Fatalf("a label before the phone shared its keys: %d %s", code, raw)
	}
	if err := phone.ShareAppStateKeys(ctx); err != nil {
		t.Fatal(err)
	}
	if err := phone.EditLabel(ctx, "1", "New customer", 2, false); err != nil {
		t.Fatal(err)
	}
	hooks.wait("label.changed of the phone", func(e hookEvent) bool {
		return e.str("event") == "label.changed" && e.str("label_id") == "1" && e.str("name") == "New customer"
	})

	var created struct{ Label struct{ ID, Name string } }
	code, raw := groupCall(t, p, "POST", "/api/labels", "application/json", `{"name":"Paid","color":5}`, "label-1", &created)
	if code != http.StatusCreated || created.Label.ID != "2" {
		t.Fatalf("create: %d %s", code, raw)
	}
	if code, raw := groupCall(t, p, "PUT", "/api/labels/2/chats/"+alice, "", "", "", nil); code != http.StatusNoContent {
		t.Fatalf("label a chat: %d %s", code, raw)
	}
	seen, err := phone.WaitLabelChanges(ctx, 3)
	if err != nil || seen[1].Name != "Paid" || seen[2].Chat != ana.JID().String() || !seen[2].Labeled {
		t.Fatalf("the phone read %+v, %v", seen, err)
	}
	if err := phone.LabelChat(ctx, "1", types.NewJID(alice, types.DefaultUserServer), true); err != nil {
		t.Fatal(err)
	}
	hooks.wait("label.chat of the phone", func(e hookEvent) bool {
		return e.str("event") == "label.chat" && e.str("label_id") == "1" && e.str("chat") == alice
	})
	var list struct {
		Labels []struct {
			ID, Name string
			Chats    []string
		}
	}
	if code, raw := groupCall(t, p, "GET", "/api/labels", "", "", "", &list); code != http.StatusOK || len(list.Labels) != 2 ||
		!slices.Equal(list.Labels[0].Chats, []string{alice}) || !slices.Equal(list.Labels[1].Chats, []string{alice}) {
		t.Fatalf("labels: %d %s", code, raw)
	}
	const msgID = "3EB0C0FFEE0001"
	for _, c := range []struct {
		method  string
		labeled bool
	}{{"PUT", true}, {"DELETE", false}} {
		if code, raw := groupCall(t, p, c.method, "/api/labels/2/chats/"+alice+"/messages/"+msgID, "", "", "", nil); code != http.StatusNoContent {
			t.Fatalf("%s a message's label: %d %s", c.method, code, raw)
		}
		hooks.wait("label.message "+c.method, func(e hookEvent) bool {
			return e.str("event") == "label.message" && e.str("whatsapp_id") == msgID && e.Payload["labeled"] == c.labeled
		})
	}
	paid := 0
	for _, e := range hooks.all() {
		if e.str("event") == "label.changed" && e.str("label_id") == "2" {
			paid++
		}
	}
	if paid != 1 {
		t.Errorf("the bridge's own label was announced %d times, want once", paid)
	}
}
