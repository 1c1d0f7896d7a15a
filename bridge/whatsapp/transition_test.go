package whatsapp

import (
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/contract"
)

// Shorter names for the table.
type status = bridge.SessionStatus

const (
	unpaired     = contract.StateUnpaired
	pairingState = contract.StatePairing
	connecting   = contract.StateConnecting
	connectedSt  = contract.StateConnected
	disconnectSt = contract.StateDisconnected
	loggedOutSt  = contract.StateLoggedOut
)

func TestTransition(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	connected := status{State: connectedSt, Account: "4915112345678", ConnectedSince: t0, LastHeartbeat: t0}
	ghost := status{State: disconnectSt, Reason: contract.ReasonKeepAliveTimeout, Account: "4915112345678", ConnectedSince: t0, LastHeartbeat: t0}
	replaced := status{State: disconnectSt, Reason: contract.ReasonStreamReplaced, Account: "4915112345678", LastHeartbeat: t0}
	pairing := status{State: pairingState}
	diskFull := status{State: disconnectSt, Reason: contract.ReasonDiskFull, Account: "4915112345678", LastHeartbeat: t0}

	cases := []struct {
		name    string
		from    status
		ev      event
		want    status
		changed bool
	}{
		{"link attempt starts pairing", status{State: unpaired}, linkStarted{}, pairing, true},
		{"QR codes run out", pairing, linkEnded{contract.ReasonQRTimeout}, status{State: unpaired, Reason: contract.ReasonQRTimeout}, true},
		{"WhatsApp unreachable while linking", pairing, linkEnded{contract.ReasonNetwork}, status{State: unpaired, Reason: contract.ReasonNetwork}, true},
		{"link end after success is ignored", status{State: connecting}, linkEnded{contract.ReasonQRTimeout}, status{State: connecting}, false},
		{"pair success", pairing, paired{"4915112345678"}, status{State: connecting, Account: "4915112345678"}, true},
		{"pair error", pairing, pairFailed{}, status{State: unpaired, Reason: contract.ReasonPairError}, true},
		{"login records since, heartbeat and account", status{State: connecting}, loggedIn{"4915112345678", "Sales"},
			status{State: connectedSt, Account: "4915112345678", PushName: "Sales", ConnectedSince: now, LastHeartbeat: now}, true},
		{"heartbeat while connected", connected, heartbeat{},
			status{State: connectedSt, Account: "4915112345678", ConnectedSince: t0, LastHeartbeat: now}, true},
		{"no heartbeat for a ghost", ghost, heartbeat{}, ghost, false},
		{"no heartbeat while connecting", status{State: connecting}, heartbeat{}, status{State: connecting}, false},
		{"keepalive silence is a disconnect", connected, keepAliveLost{}, ghost, true},
		{"keepalive restored", ghost, keepAliveBack{},
			status{State: connectedSt, Account: "4915112345678", ConnectedSince: t0, LastHeartbeat: now}, true},
		{"restored without a timeout is ignored", connected, keepAliveBack{}, connected, false},
		{"socket loss", connected, socketClosed{},
			status{State: disconnectSt, Reason: contract.ReasonNetwork, Account: "4915112345678", LastHeartbeat: t0}, true},
		{"socket loss keeps a permanent reason", replaced, socketClosed{}, replaced, false},
		{"socket loss while pairing is the link's business", pairing, socketClosed{}, pairing, false},
		{"a low disk disconnects", connected, diskLow{}, diskFull, true},
		{"a low disk while reconnecting", ghost, diskLow{}, diskFull, true},
		{"a low disk while connecting", status{State: connecting}, diskLow{}, status{State: disconnectSt, Reason: contract.ReasonDiskFull}, true},
		{"a low disk leaves an unlinked bridge alone", status{State: unpaired}, diskLow{}, status{State: unpaired}, false},
		{"socket loss keeps disk_full", diskFull, socketClosed{}, diskFull, false},
		{"a connect after the disk freed up", diskFull, connectStarted{},
			status{State: connecting, Account: "4915112345678", LastHeartbeat: t0}, true},
		{"stream replaced", connected, cutOff{contract.ReasonStreamReplaced}, replaced, true},
		{"temporary ban", connected, cutOff{contract.ReasonTemporaryBan},
			status{State: disconnectSt, Reason: contract.ReasonTemporaryBan, Account: "4915112345678", LastHeartbeat: t0}, true},
		{"client outdated", connected, cutOff{contract.ReasonClientOutdated},
			status{State: disconnectSt, Reason: contract.ReasonClientOutdated, Account: "4915112345678", LastHeartbeat: t0}, true},
		{"logged out forgets the account", connected, loggedOut{},
			status{State: loggedOutSt, Reason: contract.ReasonLoggedOut, LastHeartbeat: t0}, true},
		{"socket close after logout keeps logged out", status{State: loggedOutSt, Reason: contract.ReasonLoggedOut}, socketClosed{},
			status{State: loggedOutSt, Reason: contract.ReasonLoggedOut}, false},
		{"API logout wipes", connected, wiped{contract.ReasonUserLogout},
			status{State: unpaired, Reason: contract.ReasonUserLogout, LastHeartbeat: t0}, true},
		{"connect with credentials", status{State: disconnectSt, Reason: contract.ReasonNetwork}, connectStarted{}, status{State: connecting}, true},
		{"connect failed", status{State: connecting}, connectFailed{}, status{State: disconnectSt, Reason: contract.ReasonNetwork}, true},
		{"no event", connected, nil, connected, false},
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
	stored := status{State: connectedSt, Account: "4915112345678", PushName: "Sales", ConnectedSince: hb, LastHeartbeat: hb}
	if got := initialStatus(stored, true); got != (status{State: connecting, Account: "4915112345678", PushName: "Sales", LastHeartbeat: hb}) {
		t.Errorf("with credentials: %+v", got)
	}
	if got := initialStatus(stored, false); got != (status{State: unpaired, LastHeartbeat: hb}) {
		t.Errorf("without credentials: %+v", got)
	}
}

// The policy relies on which reasons are permanent (socketClosed keeps
// them); the contract defines them.
func TestPermanentReasons(t *testing.T) {
	for r, want := range map[bridge.Reason]bool{
		contract.ReasonStreamReplaced: true, contract.ReasonTemporaryBan: true, contract.ReasonClientOutdated: true, contract.ReasonLoggedOut: true,
		contract.ReasonNetwork: false, contract.ReasonKeepAliveTimeout: false, contract.ReasonNone: false,
	} {
		if r.Permanent() != want {
			t.Errorf("%q.Permanent() = %v", r, !want)
		}
	}
}
