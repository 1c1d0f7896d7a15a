package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// comeback is how a fleet came back after all its pods ended at once (a
// node's restart): from the deletion to every account's first login at
// the simulator, which is WhatsApp's side of the connect.
type comeback struct {
	jitter string
	// allConnected: from the deletion to the last account's login.
	allConnected time.Duration
	// spread: from the first login to the last; burst: the most logins
	// within any one second, what WhatsApp sees arrive from one address.
	spread time.Duration
	burst  int
	// missing are the accounts with no login by the deadline.
	missing int
}

// restart deletes every bridge pod at once, as a node's restart ends
// them, and measures the logins of the fleet's accounts that follow.
func (f *fleet) restart(t *testing.T, bridges []*msgbridgev1alpha1.MessagingBridge, jitter string) comeback {
	t.Helper()
	since := time.Now()
	if out := f.c.kubectl("delete", "pods", "-n", fleetNS, "--all", "--wait=false"); !strings.Contains(out, "deleted") {
		t.Fatalf("deleting the fleet's pods: %s", out)
	}
	logins := f.loginsSince(t, since, len(bridges))
	c := comeback{jitter: jitter, missing: len(bridges) - len(logins)}
	if len(logins) == 0 {
		return c
	}
	c.allConnected = logins[len(logins)-1].Sub(since)
	c.spread = logins[len(logins)-1].Sub(logins[0])
	for i := range logins {
		j := i
		for j < len(logins) && logins[j].Sub(logins[i]) < time.Second {
			j++
		}
		c.burst = max(c.burst, j-i)
	}
	f.waitAll(t, bridges, msgbridgev1alpha1.ConditionSessionConnected)
	return c
}

// loginsSince waits up to ten minutes for n accounts of the fleet to log
// in after since, and returns each account's first login, in order.
func (f *fleet) loginsSince(t *testing.T, since time.Time, n int) []time.Time {
	t.Helper()
	var first map[string]time.Time
	deadline := time.Now().Add(10 * time.Minute)
	testutil.Poll(t, 11*time.Minute, func() (string, bool) {
		first = map[string]time.Time{}
		for _, l := range f.sim.Logins() {
			if _, seen := first[l.Account]; l.At.After(since) && !seen && isFleetAccount(l.Account) {
				first[l.Account] = l.At
			}
		}
		return fmt.Sprintf("%d of %d accounts logged in again", len(first), n), len(first) >= n || time.Now().After(deadline)
	}, "the fleet never came back")
	times := make([]time.Time, 0, len(first))
	for _, at := range first {
		times = append(times, at)
	}
	slices.SortFunc(times, time.Time.Compare)
	return times
}

// setJitter sets every bridge's connectJitter (nil: the default) and waits
// for the rollout it causes: every account logged in again after the
// change, and every bridge connected.
func (f *fleet) setJitter(t *testing.T, bridges []*msgbridgev1alpha1.MessagingBridge, jitter *metav1.Duration) {
	t.Helper()
	since := time.Now()
	for _, mb := range bridges {
		var cur msgbridgev1alpha1.MessagingBridge
		if err := f.c.client.Get(context.Background(), client.ObjectKeyFromObject(mb), &cur); err != nil {
			t.Fatal(err)
		}
		cur.Spec.ConnectJitter = jitter
		if err := f.c.client.Update(context.Background(), &cur); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.loginsSince(t, since, len(bridges)); len(got) < len(bridges) {
		t.Fatalf("after connectJitter changed only %d of %d bridges logged in again", len(got), len(bridges))
	}
	f.waitAll(t, bridges, msgbridgev1alpha1.ConditionSessionConnected)
}

func (c comeback) log(t *testing.T, bridges int) {
	t.Helper()
	t.Logf("FLEET restart of %d bridges at once (all pods deleted), connectJitter %s", bridges, c.jitter)
	t.Logf("FLEET   deletion to all logged in again %.1fs, first to last login %.1fs, most logins in one second %d, missing %d",
		c.allConnected.Seconds(), c.spread.Seconds(), c.burst, c.missing)
}

// isFleetAccount: the fleet's accounts are 49151<i, seven digits>.
func isFleetAccount(number string) bool {
	return len(number) == 12 && strings.HasPrefix(number, "49151")
}
