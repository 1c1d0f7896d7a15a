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

// The push name through app state: the phone's change through the control
// API (sharing its key first) reaches a real whatsmeow client as
// events.PushNameSetting and sets its device's push name; the client's
// own change (a critical_block upload) is read by the phone, whose name
// the contacts then see.
func TestAppStatePushNameBothWays(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	srv := httptest.NewServer(sim.ControlHandler())
	t.Cleanup(srv.Close)
	base, ctx := srv.URL, wasimtest.Context(t)
	me := sim.Phone("4915700000011")
	tc := wasimtest.NewClientWith(t, wasimtest.NewContainer(t).NewDevice(), func(cli *whatsmeow.Client) { wasimclient.Configure(cli, sim.Addr()) })
	item, _ := wasimtest.ConnectForQR(t, ctx, tc)
	api(t, base, "POST", "/v1/users/4915700000011/scan", map[string]string{"qr": item.Code}, 200, nil)
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
	tc.EmitAppStateEventsOnFullSync = true

	api(t, base, "POST", "/v1/users/4915700000011/profile", map[string]string{"push_name": "Kim's phone"}, 200, nil)
	wasimtest.WaitEvent(t, tc, func(e *events.PushNameSetting) bool { return e.Action.GetName() == "Kim's phone" })
	if tc.Store.PushName != "Kim's phone" || me.Name() != "Kim's phone" {
		t.Errorf("after the phone's change: device %q, phone %q", tc.Store.PushName, me.Name())
	}

	if err := tc.SendAppState(ctx, appstate.BuildSettingPushName("Kim Support")); err != nil {
		t.Fatal(err)
	}
	if got := me.Name(); got != "Kim Support" {
		t.Errorf("the name contacts see after the device's change: %q", got)
	}
	api(t, base, "POST", "/v1/users/4915700000011/profile", map[string]string{"push_name": ""}, 400, nil)
}
