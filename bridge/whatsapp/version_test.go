package whatsapp

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/store"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/contract"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// revision is the build's version moved on by n revisions.
func revision(n uint32) store.WAVersionContainer {
	v := store.GetWAVersion()
	v[2] += n
	return v
}

// lastAnnounced is the version of the simulator's last handshake.
func lastAnnounced(sim *wasim.Simulator) store.WAVersionContainer {
	seen := sim.AnnouncedVersions()
	if len(seen) == 0 {
		return store.WAVersionContainer{}
	}
	return seen[len(seen)-1]
}

func learnedVersion(t *testing.T, r *running) string {
	t.Helper()
	var text string
	if err := r.db.QueryRowContext(context.Background(), `SELECT version FROM wa_version`).Scan(&text); err != nil {
		t.Fatalf("read wa_version: %v", err)
	}
	return text
}

// WhatsApp retires the version the bridge announces: the bridge learns the
// current one from WhatsApp Web, reconnects with it at once, keeps it in
// bridge.db, and announces it first after a restart.
func TestClientOutdatedRefreshesOnceAndReconnects(t *testing.T) {
	sim := wasim.Start(t)
	f := newBridgeFiles(t)
	r := start(t, sim, f)
	linkByQR(t, sim, r)
	if got := lastAnnounced(sim); got != store.GetWAVersion() {
		t.Fatalf("first login announced %v, want the build's %v", got, store.GetWAVersion())
	}

	newer := revision(7)
	if n := sim.SetClientVersions(newer, newer); n != 1 {
		t.Fatalf("the simulator refused %d connections, want the bridge's", n)
	}
	waitState(t, r.Session, "connected with the current version", func(s bridge.SessionStatus) bool {
		return s.State == contract.StateConnected && lastAnnounced(sim) == newer
	})
	if got := learnedVersion(t, r); got != newer.String() {
		t.Errorf("bridge.db keeps %q, want %q", got, newer)
	}
	r.stop()

	before := len(sim.AnnouncedVersions())
	r2 := start(t, sim, f)
	waitState(t, r2.Session, "reconnected after the restart", isState(contract.StateConnected, contract.ReasonNone))
	if first := sim.AnnouncedVersions()[before]; first != newer {
		t.Errorf("the restart's first login announced %v, want the learned %v", first, newer)
	}
}

// When WhatsApp Web names no version WhatsApp accepts, the bridge says
// client_outdated, stops connecting (however often it asks WhatsApp Web),
// and resumes by itself once WhatsApp Web names a newer version.
func TestClientOutdatedStopsRetryingThenResumes(t *testing.T) {
	sim := wasim.Start(t)
	r := start(t, sim, newBridgeFiles(t), func(o *Options) { o.OutdatedRetry = 50 * time.Millisecond })
	linkByQR(t, sim, r)

	sim.SetClientVersions(revision(10), revision(5)) // the page still names a refused version
	waitState(t, r.Session, "client outdated", isState(contract.StateDisconnected, contract.ReasonClientOutdated))
	// One reconnect with the learned version, refused too; then none.
	testutil.Eventually(t, 20*time.Second, func() bool {
		return slices.Contains(sim.AnnouncedVersions(), revision(5))
	}, "waiting for the reconnect with the learned version")
	waitState(t, r.Session, "client outdated again", isState(contract.StateDisconnected, contract.ReasonClientOutdated))
	logins, reads := len(sim.AnnouncedVersions()), sim.WebPageReads()
	testutil.Eventually(t, 20*time.Second, func() bool { return sim.WebPageReads() >= reads+10 },
		"waiting for the bridge to ask WhatsApp Web ten more times")
	if n := len(sim.AnnouncedVersions()); n != logins {
		t.Fatalf("the bridge connected %d more times with a version WhatsApp refused", n-logins)
	}
	if s := r.Status(); s.State != contract.StateDisconnected || s.Reason != contract.ReasonClientOutdated {
		t.Fatalf("status while outdated: %+v", s)
	}

	sim.SetClientVersions(revision(10), revision(10))
	waitState(t, r.Session, "connected after WhatsApp Web named a newer version", func(s bridge.SessionStatus) bool {
		return s.State == contract.StateConnected && lastAnnounced(sim) == revision(10)
	})
}

// WA_VERSION is announced as it is, whatever WhatsApp Web names.
func TestWAVersionSettingIsAnnounced(t *testing.T) {
	sim := wasim.Start(t)
	sim.SetClientVersions(store.WAVersionContainer{}, revision(3))
	pinned := revision(1)
	r := start(t, sim, newBridgeFiles(t), func(o *Options) { o.WAVersion = pinned.String() })
	linkByQR(t, sim, r)
	testutil.Eventually(t, 20*time.Second, func() bool { return sim.WebPageReads() > 0 }, "waiting for the version to be learned")
	sim.Phone(account).DropConnections()
	waitState(t, r.Session, "reconnected", isState(contract.StateConnected, contract.ReasonNone))
	for _, v := range sim.AnnouncedVersions() {
		if v != pinned {
			t.Errorf("announced %v, want WA_VERSION %v", v, pinned)
		}
	}
}
