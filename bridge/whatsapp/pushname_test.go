package whatsapp

import (
	"errors"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimclient"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The account's push name through app state, with the real client on
// both devices of the account: before the phone shared its keys the
// change is refused (app_state_unavailable); the phone's own change
// reaches the bridge's status; the bridge's change reaches the simulator's
// app state (the phone, and so the contacts, see the new name), the
// account's other linked device reads it, and the bridge's own device
// and its profile have it.
func TestPushNameThroughAppState(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	// A burst of two: the change refused for want of keys takes no token,
	// the change and the profile's read one each.
	sim, r, _, book := linkedWithBlocks(t, 2)
	ctx := waitCtx(t)
	phone := sim.Phone(account)
	other := wasimtest.NewClientWith(t, wasimtest.NewContainer(t).NewDevice(), func(cli *whatsmeow.Client) {
		wasimclient.Configure(cli, sim.Addr())
		cli.EmitAppStateEventsOnFullSync = true
	})
	item, _ := wasimtest.ConnectForQR(t, ctx, other)
	if _, err := phone.ScanQR(ctx, item.Code); err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent[*events.Connected](t, other, nil)

	if err := book.SetPushName(ctx, "Too early"); !errors.Is(err, bridge.ErrAppStateUnavailable) {
		t.Fatalf("a push name before the key share: %v, want app_state_unavailable", err)
	}
	if err := phone.SetPushName(ctx, "Ana's phone"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the phone's push name", func() bool { return r.Status().PushName == "Ana's phone" })
	// The other device has read the collection once (a full sync, its
	// first): the bridge's change below must reach it as a change. Without
	// this wait, on a busy machine its first sync could come after the
	// bridge's patch and read that in the full sync.
	wasimtest.WaitEvent(t, other, func(e *events.PushNameSetting) bool { return e.Action.GetName() == "Ana's phone" })

	if err := book.SetPushName(ctx, "Acme Support"); err != nil {
		t.Fatal(err)
	}
	if got := phone.Name(); got != "Acme Support" {
		t.Errorf("the name contacts see: %q", got)
	}
	seen := wasimtest.WaitEvent(t, other, func(e *events.PushNameSetting) bool { return e.Action.GetName() == "Acme Support" })
	if seen.FromFullSync {
		t.Error("the other device read the name in a full sync, not as the change WhatsApp announced")
	}
	cli, err := r.readyClient()
	if err != nil || cli.Store.PushName != "Acme Support" {
		t.Errorf("the bridge's device: %v", err)
	}
	if r.Status().PushName != "Acme Support" {
		t.Errorf("status push name %q", r.Status().PushName)
	}
	if p, err := book.OwnProfile(ctx); err != nil || p.PushName != "Acme Support" {
		t.Errorf("own profile %+v %v", p, err)
	}
}
