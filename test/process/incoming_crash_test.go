package process

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// kill -9 in the middle of an incoming burst from contacts new to the
// account (their first messages set up the Signal sessions): after the
// restart every message reaches the webhook once, with its text, in its
// chat's order, and what the contacts send next still decrypts. The bridge
// holds decryptions in memory until the acks' sync (signalstore.go); this is
// the crash that must not cost a message or a session.
func TestIncomingBurstSurvivesKill9(t *testing.T) {
	sim := wasim.Start(t)
	dataDir := t.TempDir()
	hooks := newArrivals(t)
	env := []string{"WEBHOOK_URL=" + hooks.srv.URL, "WEBHOOK_SECRET=" + testWebhookSecret}
	p := linkedBridge(t, sim, dataDir, env...)
	to := types.NewJID(testAccount, types.DefaultUserServer)

	const contacts, each = 3, 400
	ids := make([][]string, contacts)
	var wg sync.WaitGroup
	for c := range contacts {
		u := sim.Contact(fmt.Sprintf("49151000030%02d", c), "Contact")
		wg.Go(func() {
			for n := range each {
				id, err := u.SendText(context.Background(), to, fmt.Sprintf("c%d n%d", c, n))
				if err != nil {
					t.Error(err)
					return
				}
				ids[c] = append(ids[c], id)
			}
		})
	}
	waitArrived(t, hooks, contacts*each/3)
	p.kill()
	wg.Wait()
	killedAt := arrivedCount(hooks)

	p = startBridge(t, simBridgeBin, append(simEnv(sim, dataDir), env...))
	waitConnected(t, p)
	for c := range ids {
		hooks.wait(t, ids[c])
	}
	if n := hooks.outOfOrder(ids); n != 0 {
		t.Errorf("%d messages reached the webhook after a later one of their chat", n)
	}
	hooks.mu.Lock()
	for c := range ids {
		for n, id := range ids[c] {
			if want := fmt.Sprintf("c%d n%d", c, n); hooks.text[id] != want {
				t.Errorf("message %s arrived as %q, want %q", id, hooks.text[id], want)
			}
		}
	}
	hooks.mu.Unlock()
	t.Logf("killed after %d of %d had reached the webhook", killedAt, contacts*each)

	for c := range contacts { // the sessions survived: new messages decrypt
		u := sim.Contact(fmt.Sprintf("49151000030%02d", c), "Contact")
		hooks.wait(t, []string{sendB(t, u, to, "after the restart")})
	}
}

func arrivedCount(a *arrivals) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.order)
}

// waitArrived waits until n messages reached the webhook.
func waitArrived(t testing.TB, a *arrivals, n int) {
	t.Helper()
	deadline := time.After(time.Minute)
	for arrivedCount(a) < n {
		select {
		case <-a.wake:
		case <-deadline:
			t.Fatalf("%d of %d messages reached the webhook", arrivedCount(a), n)
		}
	}
}
