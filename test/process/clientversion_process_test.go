package process

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/store"

	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// revision is the pinned whatsmeow's version moved on by n revisions.
func revision(n uint32) store.WAVersionContainer {
	v := store.GetWAVersion()
	v[2] += n
	return v
}

// WhatsApp refuses the bridge's client version and WhatsApp Web names no
// version it accepts: the bridge process says client_outdated in its admin
// state, /health, a session.status webhook and the dashboard's banner, and
// resumes by itself once WhatsApp Web names a newer version.
func TestClientOutdatedShownEverywhereAndRecovered(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	dataDir := t.TempDir()
	p := linkedBridge(t, sim, dataDir, hooks.env()...)
	ctx := browser(t)
	signInShowing(t, ctx, "http://"+p.addr, "overview-h")
	waitJS(t, ctx, "connected", pageState+` === "connected"`, 20*time.Second)

	sim.SetClientVersions(revision(10), revision(5))
	// Refused, it learns revision 5, is refused with it too, and stays.
	testutil.Eventually(t, 30*time.Second, func() bool { return slices.Contains(sim.AnnouncedVersions(), revision(5)) },
		"waiting for the reconnect with the learned version")
	st := waitAdminState(t, p, "client outdated", func(s adminState) bool { return s.Reason == "client_outdated" })
	if st.State != "disconnected" || st.Connected {
		t.Errorf("admin state %+v", st)
	}
	var health struct {
		WhatsApp string `json:"whatsapp"`
	}
	request(t, http.MethodGet, "http://"+p.addr+"/health", "", "", "", &health)
	if health.WhatsApp != "client_outdated" {
		t.Errorf("health says %q", health.WhatsApp)
	}
	hooks.wait("session.status client_outdated", func(e hookEvent) bool {
		return e.str("event") == "session.status" && e.str("reason") == "client_outdated"
	})
	waitJS(t, ctx, "the outdated banner", `!document.getElementById("banner-outdated").hidden`, 30*time.Second)

	// WhatsApp Web names a version WhatsApp accepts. The running bridge
	// would learn it within the hour (bridge/whatsapp tests that with a short
	// period); a restart announces the version it learned last, is refused,
	// learns the new one at once and connects.
	sim.SetClientVersions(revision(10), revision(10))
	p.kill()
	p2 := startBridge(t, simBridgeBin, append(simEnv(sim, dataDir), hooks.env()...))
	waitAdminState(t, p2, "connected again", connected)
	if seen := sim.AnnouncedVersions(); seen[len(seen)-1] != revision(10) {
		t.Errorf("the bridge reconnected with %v, want %v", seen[len(seen)-1], revision(10))
	}
}
