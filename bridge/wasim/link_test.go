package wasim_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

func TestLinkByQR(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("+49 151 0000 0001")
	ctx := wasimtest.Context(t)
	container := wasimtest.NewContainer(t)
	tc := wasimtest.NewClient(t, sim, container.NewDevice())

	item, qr := wasimtest.ConnectForQR(t, ctx, tc)
	const linkPrefix = "https://wa.me/settings/linked_devices#"
	if item.Event != whatsmeow.QRChannelEventCode || !strings.HasPrefix(item.Code, linkPrefix) || strings.Count(item.Code, ",") != 4 {
		t.Fatalf("QR item %+v", item)
	}
	if _, err := phone.ScanQR(ctx, linkPrefix+"2@nope,"+item.Code[strings.Index(item.Code, ",")+1:]); !errors.Is(err, wasim.ErrUnknownQR) {
		t.Fatalf("ScanQR with an unknown ref: %v, want ErrUnknownQR", err)
	}
	dev, err := phone.ScanQR(ctx, item.Code)
	if err != nil {
		t.Fatal(err)
	}
	if dev.User != "4915100000001" || dev.Device == 0 {
		t.Fatalf("linked device %s", dev)
	}
	success := wasimtest.WaitEvent[*events.PairSuccess](t, tc, nil)
	if success.ID != dev || success.LID.User != phone.LID().User {
		t.Fatalf("PairSuccess %+v, want ID %s", success, dev)
	}
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
	if got := <-qr; got.Event != whatsmeow.QRChannelSuccess.Event {
		t.Fatalf("QR channel ended with %q", got.Event)
	}
	if tc.Store.ID == nil || *tc.Store.ID != dev || tc.Store.Account == nil {
		t.Fatalf("store after pairing: ID %v account %v", tc.Store.ID, tc.Store.Account != nil)
	}
	if got := phone.Devices(); len(got) != 1 || got[0] != dev {
		t.Fatalf("phone devices %v", got)
	}

	// The stored credentials log in again from a new client on the same store.
	tc.Disconnect()
	devices, err := container.GetAllDevices(ctx)
	if err != nil || len(devices) != 1 {
		t.Fatalf("stored devices %d, %v", len(devices), err)
	}
	again := wasimtest.NewClient(t, sim, devices[0])
	if err := again.Connect(); err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent[*events.Connected](t, again, nil)
	if !phone.Online(dev) {
		t.Fatal("device not online after reconnect")
	}
}

func TestLinkByPairingCode(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915100000002")
	ctx := wasimtest.Context(t)
	tc := wasimtest.NewClient(t, sim, wasimtest.NewContainer(t).NewDevice())
	wasimtest.ConnectForQR(t, ctx, tc) // the socket is ready once the first QR arrives
	code, err := tc.PairPhone(ctx, "+49 151 0000 0002", true, whatsmeow.PairClientChrome, "Chrome (Linux)")
	if err != nil {
		t.Fatal(err)
	}
	if len(code) != 9 || code[4] != '-' {
		t.Fatalf("pairing code %q", code)
	}
	if _, err := sim.Phone("4915100000003").EnterCode(ctx, code); !errors.Is(err, wasim.ErrNoPendingCode) {
		t.Fatalf("code entered on another phone: %v, want ErrNoPendingCode", err)
	}
	wrong := []byte(strings.ReplaceAll(code, "-", ""))
	wrong[0] = map[bool]byte{true: 'B', false: 'A'}[wrong[0] == 'A']
	if _, err := phone.EnterCode(ctx, string(wrong)); !errors.Is(err, wasim.ErrWrongCode) {
		t.Fatalf("wrong code: %v, want ErrWrongCode", err)
	}
	dev, err := phone.EnterCode(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent[*events.PairSuccess](t, tc, func(e *events.PairSuccess) bool { return e.ID == dev })
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
	if tc.Store.ID == nil || tc.Store.ID.User != "4915100000002" {
		t.Fatalf("store ID %v", tc.Store.ID)
	}
}

func TestLogoutUnlinksDevice(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915100000004")
	tc := wasimtest.LinkByQR(t, sim, phone)
	if err := tc.Logout(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(phone.Devices()) != 0 {
		t.Fatalf("devices after logout: %v", phone.Devices())
	}
	if tc.Store.ID != nil {
		t.Fatal("client kept its ID after logout")
	}
}
