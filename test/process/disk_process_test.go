package process

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/diskguard"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// diskFullTexts is how many texts a contact sends while the disk is full
// (the run).
const diskFullTexts = 150

// fillDisk writes a file into dir until the volume has about leave bytes
// free, and returns its path.
func fillDisk(t *testing.T, dir string, leave uint64) string {
	t.Helper()
	s, err := diskguard.Statfs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Free <= leave {
		t.Fatalf("only %d bytes free before filling", s.Free)
	}
	path := filepath.Join(dir, "fill")
	if err := os.WriteFile(path, make([]byte, s.Free-leave), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sendAndDeliver has contact send diskFullTexts texts to the account, runs
// then, and returns how long after then all of them reached the webhook.
func sendAndDeliver(t *testing.T, contact *wasim.User, hooks *hookReceiver, prefix string, then func()) time.Duration {
	t.Helper()
	ids := map[string]bool{}
	for i := range diskFullTexts {
		id, err := contact.SendText(context.Background(), types.NewJID(testAccount, types.DefaultUserServer), fmt.Sprintf("%s %d", prefix, i))
		if err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	then()
	start := time.Now()
	delivered := func() int {
		seen := map[string]bool{}
		for _, e := range hooks.all() {
			if id := e.str("whatsapp_id"); e.str("event") == "message.upsert" && ids[id] {
				seen[id] = true
			}
		}
		return len(seen)
	}
	if !testutil.Wait(2*time.Minute, func() bool { return delivered() == diskFullTexts }) {
		t.Fatalf("%d of %d texts (%s) reached the webhook", delivered(), diskFullTexts, prefix)
	}
	return time.Since(start)
}

// A DATA_DIR volume below DISK_RESERVE: the bridge disconnects before
// anything reaches whatsmeow's decrypt and says disk_full in the admin
// state, /health, a session.status event and the free-space metric, and
// refuses sends with 507; the texts a contact sends meanwhile wait at
// WhatsApp. Once space is back it reconnects by itself and every text
// reaches the webhook.
func TestDiskFullStopsReceivingAndResumes(t *testing.T) {
	dataDir := tmpfsDataDir(t, "32m")
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	p := linkedBridge(t, sim, dataDir, append(hooks.env(), "DISK_RESERVE=8MiB")...)
	base := "http://" + p.addr
	contact := sim.Contact(alice, "Alice")
	// The baseline in the same run: as many texts to the bridge while it
	// is connected.
	baseline := sendAndDeliver(t, contact, hooks, "while connected", func() {})

	fill := fillDisk(t, dataDir, 4<<20)
	held := waitAdminState(t, p, "disk_full", func(s adminState) bool { return s.Reason == "disk_full" })
	if held.Connected || held.State != "disconnected" {
		t.Errorf("admin state %+v, want disconnected by disk_full", held)
	}
	hooks.wait("session.status disk_full", func(e hookEvent) bool {
		return e.str("event") == "session.status" && e.str("reason") == "disk_full"
	})
	var health struct{ WhatsApp string }
	if request(t, http.MethodGet, base+"/health", "", "", "", &health); health.WhatsApp != "disk_full" {
		t.Errorf("/health whatsapp %q", health.WhatsApp)
	}
	if m := metricsOf(t, base); !strings.Contains(m, "msgbridge_disk_free_bytes ") {
		t.Error("no msgbridge_disk_free_bytes in /metrics")
	}
	if code, raw := sendText(t, p, alice, "refused"); code != http.StatusInsufficientStorage || !strings.Contains(raw, `"insufficient_storage"`) {
		t.Errorf("send while the disk is full: %d %s", code, raw)
	}

	// While the disk is full the texts wait at WhatsApp; the clock starts
	// when space comes back.
	took := sendAndDeliver(t, contact, hooks, "while full", func() {
		if err := os.Remove(fill); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("FIGURE %d of %d texts sent while the disk was full reached the webhook %s after space came back (baseline, sent while connected: %s)",
		diskFullTexts, diskFullTexts, took.Round(10*time.Millisecond), baseline.Round(10*time.Millisecond))
	waitAdminState(t, p, "connected again", connected)
	if code, raw := sendText(t, p, alice, "after"); code != http.StatusOK {
		t.Errorf("send after space came back: %d %s", code, raw)
	}
}
