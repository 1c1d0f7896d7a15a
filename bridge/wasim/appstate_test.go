package wasim_test

import (
	"net/http/httptest"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/appstate"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimclient"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// The phone shares its app state key, and a real whatsmeow client reads
// the labels the phone made (a full sync), hears the phone's later label
// changes (server_sync), and writes its own, which the phone reads: both
// sides' hash states agree, or whatsmeow would refuse the patches.
func TestAppStateLabelsBothWays(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	srv := httptest.NewServer(sim.ControlHandler())
	t.Cleanup(srv.Close)
	base, ctx := srv.URL, wasimtest.Context(t)
	me, kim := sim.Phone("4915700000001"), sim.Contact("4915700000002", "Kim")
	tc := wasimtest.NewClientWith(t, wasimtest.NewContainer(t).NewDevice(), func(cli *whatsmeow.Client) { wasimclient.Configure(cli, sim.Addr()) })
	item, _ := wasimtest.ConnectForQR(t, ctx, tc)
	api(t, base, "POST", "/v1/users/4915700000001/scan", map[string]string{"qr": item.Code}, 200, nil)
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
	tc.EmitAppStateEventsOnFullSync = true
	api(t, base, "POST", "/v1/users/4915700000001/labels", map[string]any{"action": "edit", "label": "1", "name": "New customer", "color": 2}, 200, nil)
	edit := wasimtest.WaitEvent(t, tc, func(e *events.LabelEdit) bool { return e.LabelID == "1" })
	if edit.Action.GetName() != "New customer" || edit.Action.GetColor() != 2 || edit.Action.GetDeleted() {
		t.Errorf("label edit %+v", edit.Action)
	}
	api(t, base, "POST", "/v1/users/4915700000001/labels", map[string]any{"action": "chat", "label": "1", "chat": kim.Number()}, 200, nil)
	chat := wasimtest.WaitEvent(t, tc, func(e *events.LabelAssociationChat) bool { return e.LabelID == "1" })
	if chat.JID != kim.JID() || !chat.Action.GetLabeled() {
		t.Errorf("label association %+v %+v", chat.JID, chat.Action)
	}

	if err := tc.SendAppState(ctx, appstate.BuildLabelEdit("2", "Paid", 5, false)); err != nil {
		t.Fatal(err)
	}
	if err := tc.SendAppState(ctx, appstate.BuildLabelMessage(kim.JID(), "2", "3EB0AA", true)); err != nil {
		t.Fatal(err)
	}
	changes, err := me.WaitLabelChanges(ctx, 4)
	if err != nil {
		t.Fatalf("the phone read %+v: %v", changes, err)
	}
	if c := changes[2]; c.Label != "2" || c.Name != "Paid" || c.Color != 5 {
		t.Errorf("the device's edit as the phone read it: %+v", c)
	}
	if c := changes[3]; c.Label != "2" || c.Chat != kim.JID().String() || c.Message != "3EB0AA" || !c.Labeled {
		t.Errorf("the device's message label as the phone read it: %+v", c)
	}
}
