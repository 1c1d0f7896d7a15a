package whatsapp

import (
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
)

func TestTransition(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	connected := Status{State: StateConnected, Account: "4915112345678", ConnectedSince: t0, LastHeartbeat: t0}
	ghost := Status{State: StateDisconnected, Reason: ReasonKeepAliveTimeout, Account: "4915112345678", ConnectedSince: t0, LastHeartbeat: t0}
	replaced := Status{State: StateDisconnected, Reason: ReasonStreamReplaced, Account: "4915112345678", LastHeartbeat: t0}
	pairing := Status{State: StatePairing}

	cases := []struct {
		name    string
		from    Status
		ev      any
		want    Status
		changed bool
	}{
		{"link attempt starts pairing", Status{State: StateUnpaired}, linkStarted{}, pairing, true},
		{"QR codes run out", pairing, linkEnded{ReasonQRTimeout}, Status{State: StateUnpaired, Reason: ReasonQRTimeout}, true},
		{"link end after success is ignored", Status{State: StateConnecting}, linkEnded{ReasonQRTimeout}, Status{State: StateConnecting}, false},
		{"pair success", pairing, &events.PairSuccess{ID: types.NewADJID("4915112345678", 0, 3)},
			Status{State: StateConnecting, Account: "4915112345678"}, true},
		{"pair error", pairing, &events.PairError{}, Status{State: StateUnpaired, Reason: ReasonPairError}, true},
		{"login records since, heartbeat and account", Status{State: StateConnecting}, loggedIn{"4915112345678", "Sales"},
			Status{State: StateConnected, Account: "4915112345678", PushName: "Sales", ConnectedSince: now, LastHeartbeat: now}, true},
		{"heartbeat while connected", connected, heartbeat{},
			Status{State: StateConnected, Account: "4915112345678", ConnectedSince: t0, LastHeartbeat: now}, true},
		{"no heartbeat for a ghost", ghost, heartbeat{}, ghost, false},
		{"no heartbeat while connecting", Status{State: StateConnecting}, heartbeat{}, Status{State: StateConnecting}, false},
		{"keepalive silence is a disconnect", connected, &events.KeepAliveTimeout{ErrorCount: 1}, ghost, true},
		{"keepalive restored", ghost, &events.KeepAliveRestored{},
			Status{State: StateConnected, Account: "4915112345678", ConnectedSince: t0, LastHeartbeat: now}, true},
		{"restored without a timeout is ignored", connected, &events.KeepAliveRestored{}, connected, false},
		{"socket loss", connected, &events.Disconnected{},
			Status{State: StateDisconnected, Reason: ReasonNetwork, Account: "4915112345678", LastHeartbeat: t0}, true},
		{"socket loss keeps a permanent reason", replaced, &events.Disconnected{}, replaced, false},
		{"stream replaced", connected, &events.StreamReplaced{}, replaced, true},
		{"temporary ban", connected, &events.TemporaryBan{},
			Status{State: StateDisconnected, Reason: ReasonTemporaryBan, Account: "4915112345678", LastHeartbeat: t0}, true},
		{"client outdated", connected, &events.ClientOutdated{},
			Status{State: StateDisconnected, Reason: ReasonClientOutdated, Account: "4915112345678", LastHeartbeat: t0}, true},
		{"logged out forgets the account", connected, &events.LoggedOut{},
			Status{State: StateLoggedOut, Reason: ReasonLoggedOut, LastHeartbeat: t0}, true},
		{"socket close after logout keeps logged out", Status{State: StateLoggedOut, Reason: ReasonLoggedOut}, &events.Disconnected{},
			Status{State: StateLoggedOut, Reason: ReasonLoggedOut}, false},
		{"API logout wipes", connected, wiped{ReasonUserLogout},
			Status{State: StateUnpaired, Reason: ReasonUserLogout, LastHeartbeat: t0}, true},
		{"connect with credentials", Status{State: StateDisconnected, Reason: ReasonNetwork}, connectStarted{}, Status{State: StateConnecting}, true},
		{"connect failed", Status{State: StateConnecting}, connectFailed{}, Status{State: StateDisconnected, Reason: ReasonNetwork}, true},
		{"unrelated event", connected, &events.Message{}, connected, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, changed := transition(c.from, c.ev, now)
			if got != c.want || changed != c.changed {
				t.Errorf("got %+v (changed %v), want %+v (changed %v)", got, changed, c.want, c.changed)
			}
		})
	}
}

func TestInitialStatusIsNeverConnected(t *testing.T) {
	hb := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	stored := Status{State: StateConnected, Account: "4915112345678", PushName: "Sales", ConnectedSince: hb, LastHeartbeat: hb}
	if got := initialStatus(stored, true); got != (Status{State: StateConnecting, Account: "4915112345678", PushName: "Sales", LastHeartbeat: hb}) {
		t.Errorf("with credentials: %+v", got)
	}
	if got := initialStatus(stored, false); got != (Status{State: StateUnpaired, LastHeartbeat: hb}) {
		t.Errorf("without credentials: %+v", got)
	}
}

func TestPermanentReasons(t *testing.T) {
	for r, want := range map[Reason]bool{
		ReasonStreamReplaced: true, ReasonTemporaryBan: true, ReasonClientOutdated: true, ReasonLoggedOut: true,
		ReasonNetwork: false, ReasonKeepAliveTimeout: false, ReasonNone: false,
	} {
		if r.Permanent() != want {
			t.Errorf("%q.Permanent() = %v", r, !want)
		}
	}
}
