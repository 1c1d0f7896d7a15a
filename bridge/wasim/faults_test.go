package wasim_test

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// terminalFaultOptions keep the server from closing the socket after a
// stream error or connect failure before the client does: whatsmeow's
// NoiseSocket.Stop writes FrameSocket.OnDisconnect without the lock
// FrameSocket.Close reads it under, so calling Disconnect while a
// server-closed socket is still being torn down is a data race inside
// whatsmeow. Tests that reuse a client after such a fault therefore close it
// themselves first.
var terminalFaultOptions = wasim.Options{CloseGrace: time.Minute}

func TestFaultGhostConnection(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915500000001")
	gina := sim.Contact("4915500000002", "Gina")
	tc := wasimtest.LinkByQR(t, sim, phone)

	phone.StopAnswering()
	wasimtest.WaitEvent[*events.KeepAliveTimeout](t, tc, nil)
	if !tc.IsConnected() {
		t.Fatal("the socket of a ghost connection should stay open")
	}
	// A message for the ghost is kept and arrives once the server answers again.
	id, err := gina.SendText(wasimtest.Context(t), phone.JID(), "are you there?")
	if err != nil {
		t.Fatal(err)
	}
	phone.ResumeAnswering()
	wasimtest.WaitEvent[*events.KeepAliveRestored](t, tc, nil)
	wasimtest.WaitEvent(t, tc, func(m *events.Message) bool { return m.Info.ID == id })
	if _, err := gina.WaitTick(wasimtest.Context(t), id, types.ReceiptTypeDelivered); err != nil { // before cleanup disconnects
		t.Fatalf("no delivery receipt for Gina's message: %v", err)
	}
}

func TestFaultDropConnection(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915500000011")
	tc := wasimtest.LinkByQR(t, sim, phone)

	if n := phone.DropConnections(); n != 1 {
		t.Fatalf("dropped %d connections", n)
	}
	wasimtest.WaitEvent[*events.Disconnected](t, tc, nil)
	wasimtest.WaitEvent[*events.Connected](t, tc, nil) // whatsmeow reconnects by itself
}

func TestFaultStreamReplaced(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t, terminalFaultOptions)
	phone := sim.Phone("4915500000021")
	tc := wasimtest.LinkByQR(t, sim, phone)

	phone.ReplaceStream()
	wasimtest.WaitEvent[*events.StreamReplaced](t, tc, nil)
	tc.Disconnect()
	if err := phone.WaitOnline(wasimtest.Context(t), *tc.Store.ID, false); err != nil {
		t.Fatal(err)
	}
}

// With the default grace period the server closes the socket itself and
// whatsmeow, which expected it, neither emits Disconnected nor reconnects.
// The client is not touched afterwards (see terminalFaultOptions).
func TestFaultServerClosesAfterStreamError(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915500000022")
	tc := wasimtest.LinkByQR(t, sim, phone)
	tc.SkipDisconnect = true
	dev := *tc.Store.ID

	phone.ReplaceStream()
	wasimtest.WaitEvent[*events.StreamReplaced](t, tc, nil)
	if err := phone.WaitOnline(wasimtest.Context(t), dev, false); err != nil {
		t.Fatal(err)
	}
}

func TestFaultSecondLoginReplacesFirst(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t, terminalFaultOptions)
	phone := sim.Phone("4915500000031")
	first := wasimtest.LinkByQR(t, sim, phone)

	second := wasimtest.NewClient(t, sim, first.Store)
	if err := second.Connect(); err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent[*events.StreamReplaced](t, first, nil)
	first.Disconnect()
	wasimtest.WaitEvent[*events.Connected](t, second, nil)
	// Both logins are on the record (the fleet benchmark's restart
	// phase reads it), the second after the first.
	var mine []wasim.Login
	for _, l := range sim.Logins() {
		if l.Account == "4915500000031" {
			mine = append(mine, l)
		}
	}
	if len(mine) != 2 || mine[1].At.Before(mine[0].At) {
		t.Errorf("logins %+v, want the first device's and the second's", mine)
	}
}

func TestFaultLoggedOut(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t, terminalFaultOptions)
	phone := sim.Phone("4915500000041")

	// While connected: device_removed stream error.
	tc := wasimtest.LinkByQR(t, sim, phone)
	phone.LogOutDevices()
	lo := wasimtest.WaitEvent[*events.LoggedOut](t, tc, nil)
	if lo.OnConnect {
		t.Fatalf("LoggedOut %+v, want OnConnect false", lo)
	}
	tc.Disconnect()

	// While offline: the next login fails with 401.
	tc2 := wasimtest.LinkByQR(t, sim, phone)
	tc2.Disconnect()
	phone.LogOutDevices()
	if err := tc2.Connect(); err != nil {
		t.Fatal(err)
	}
	lo = wasimtest.WaitEvent[*events.LoggedOut](t, tc2, nil)
	if !lo.OnConnect || lo.Reason != events.ConnectFailureLoggedOut {
		t.Fatalf("LoggedOut %+v, want OnConnect and reason 401", lo)
	}
	tc2.Disconnect()
}

func TestFaultTemporaryBan(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t, terminalFaultOptions)
	phone := sim.Phone("4915500000051")
	tc := wasimtest.LinkByQR(t, sim, phone)

	phone.TempBan(int(events.TempBanSentToTooManyPeople), time.Hour)
	ban := wasimtest.WaitEvent[*events.TemporaryBan](t, tc, nil)
	if ban.Code != events.TempBanSentToTooManyPeople || ban.Expire != time.Hour {
		t.Fatalf("ban %+v", ban)
	}
	tc.Disconnect()
	// Logins stay refused until the ban is lifted.
	if err := tc.Connect(); err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent[*events.TemporaryBan](t, tc, nil)
	tc.Disconnect()
	phone.LiftBan()
	if err := tc.Connect(); err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent[*events.Connected](t, tc, nil)
}

func TestFaultClientOutdated(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t, terminalFaultOptions)
	phone := sim.Phone("4915500000061")
	tc := wasimtest.LinkByQR(t, sim, phone)

	phone.SetClientOutdated(true)
	wasimtest.WaitEvent[*events.ClientOutdated](t, tc, nil)
	tc.Disconnect()
	if err := tc.Connect(); err != nil {
		t.Fatal(err)
	}
	wasimtest.WaitEvent[*events.ClientOutdated](t, tc, nil) // and again at the next login
	tc.Disconnect()
}

func TestFaultSendErrors(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915500000071")
	hank := sim.Contact("4915500000072", "Hank")
	ivy := sim.Contact("4915500000073", "Ivy")
	tc := wasimtest.LinkByQR(t, sim, phone)
	ctx := wasimtest.Context(t)
	send := func(to *wasim.User) (whatsmeow.SendResponse, error) {
		return tc.SendMessage(ctx, to.JID(), &waE2E.Message{Conversation: proto.String("retry me")})
	}

	phone.FailSends(2, wasim.FailAck, 479)
	for i := range 2 {
		if _, err := send(hank); !errors.Is(err, whatsmeow.ErrServerReturnedError) {
			t.Fatalf("send %d: %v, want ErrServerReturnedError", i, err)
		}
	}
	resp, err := send(hank)
	if err != nil {
		t.Fatalf("third send: %v", err)
	}
	if m := waitMessage(t, hank, resp.ID); m.Text() != "retry me" {
		t.Fatalf("hank got %q", m.Text())
	}
	if n := len(hank.Received()); n != 1 {
		t.Fatalf("hank received %d messages, want only the one that was acked", n)
	}

	phone.FailSends(1, wasim.FailDeviceList, 0)
	if _, err := send(ivy); err == nil {
		t.Fatal("send with a failing device list succeeded")
	}
	if _, err := send(ivy); err != nil {
		t.Fatalf("send after the failure: %v", err)
	}
}

func TestFaultSlowAnswers(t *testing.T) {
	t.Parallel()
	sim := wasim.Start(t)
	phone := sim.Phone("4915500000081")
	jack := sim.Contact("4915500000082", "Jack")
	tc := wasimtest.LinkByQR(t, sim, phone)
	sendText(t, tc, jack.JID(), "warm up") // device list and session are cached now

	const delay = 400 * time.Millisecond
	phone.SetDelay(delay)
	start := time.Now()
	sendText(t, tc, jack.JID(), "slow")
	if took := time.Since(start); took < delay {
		t.Fatalf("send took %v with a %v delay", took, delay)
	}
	phone.SetDelay(0)
}
