package controllers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
	"github.com/msgbridge/msgbridge/controllers/conditions"
)

// Issue 44.7: two operator replicas elect one leader; when the leader is
// killed mid-fleet (its Lease not released, as in a lost node) while the
// fleet changes under it (pods evicted, a node partitioned, heartbeats
// stopped), the other takes over and, before any other work, re-observes
// every bridge: within one heartbeat interval of its election no status
// says Ready for a bridge that is not. Without the re-observation the new
// leader's rounds spend the bridge timeout (5 s) on each unreachable bridge,
// four at a time, and the fleet's statuses stay false for 10 s and more (two
// heartbeat intervals of 5 s).
func TestNewLeaderCorrectsTheFleetWithinAHeartbeat(t *testing.T) {
	ns := testNamespace(t)
	// The interval of the cluster; the default is 15 s.
	const perGroup, heartbeat = 8, 5 * time.Second
	groups := []string{"evicted", "partitioned", "stale"}
	fakes := map[string]*fakeBridge{}
	urls := map[string]string{}
	var fleet []*msgbridgev1alpha1.MessagingBridge
	for _, group := range groups {
		for i := range perGroup {
			name := fmt.Sprintf("%s-%d", group, i)
			fb := newFakeBridge(t, testAdminToken)
			fb.set(connectedState(0))
			fb.liveHeartbeat.Store(true)
			fakes[name], urls[name] = fb, fb.URL
			mb := newBridgeWithKeys(t, ns, name)
			mb.Spec.HeartbeatInterval = &metav1.Duration{Duration: heartbeat}
			fleet = append(fleet, mb)
		}
	}
	opts := operatorOptions{bridges: urls, leaderElection: true, bridgeTimeout: bridgeclient.DefaultTimeout}
	first, second := startOperator(t, ns, opts), startOperator(t, ns, opts)
	leader, standby := electedOne(t, first, second)

	for _, mb := range fleet {
		create(t, mb)
	}
	for _, mb := range fleet {
		markPodReady(t, mb)
	}
	for _, mb := range fleet {
		waitCondition(t, mb, msgbridgev1alpha1.ConditionReady, metav1.ConditionTrue, conditions.ReasonReady)
	}
	select {
	case <-standby.mgr.Elected():
		t.Fatal("both replicas lead")
	default:
	}

	leader.stop()               // killed: the Lease stays until it expires
	want := map[string]string{} // bridge: the condition that must say why it is not Ready
	for _, mb := range fleet {
		fb := fakes[mb.Name]
		switch group := mb.Name[:len(mb.Name)-2]; group {
		case "evicted":
			markPodNotReady(t, mb)
			want[mb.Name] = msgbridgev1alpha1.ConditionAvailable + "=False/" + conditions.ReasonPodNotReady
		case "partitioned":
			fb.hung.Store(true)
			want[mb.Name] = msgbridgev1alpha1.ConditionSessionConnected + "=Unknown/" + conditions.ReasonStatusUnreachable
		case "stale":
			fb.liveHeartbeat.Store(false)
			fb.set(connectedState(time.Hour))
			want[mb.Name] = msgbridgev1alpha1.ConditionSessionConnected + "=False/" + conditions.ReasonHeartbeatStale
		}
	}
	t.Cleanup(func() {
		for _, fb := range fakes {
			fb.hung.Store(false)
		}
	})

	select {
	case <-standby.mgr.Elected():
	case <-time.After(20 * time.Second):
		t.Fatal("the standby replica was not elected after the leader was killed")
	}
	elected := time.Now()
	eventually(t, heartbeat-time.Since(elected), func() (bool, string) {
		wrong := untrueStatuses(t, fleet, want)
		return wrong == "", fmt.Sprintf("%s after the new leader's election (one heartbeat interval: %s): %s",
			time.Since(elected).Round(time.Millisecond), heartbeat, wrong)
	})
	t.Logf("FIGURE new leader: %d bridges (%d evicted, %d partitioned, %d with a stale heartbeat) say what is true %s after its election (heartbeat interval %s)",
		len(fleet), perGroup, perGroup, perGroup, time.Since(elected).Round(time.Millisecond), heartbeat)
}

// electedOne waits until one of two operators leads, and returns it first.
func electedOne(t *testing.T, a, b *testOperator) (leader, standby *testOperator) {
	t.Helper()
	select {
	case <-a.mgr.Elected():
		return a, b
	case <-b.mgr.Elected():
		return b, a
	case <-time.After(20 * time.Second):
		t.Fatal("no replica was elected")
	}
	return nil, nil
}

// untrueStatuses lists the bridges whose status is not Ready=False with the
// reason want gives ("Type=Status/Reason" of the condition that explains it).
func untrueStatuses(t *testing.T, fleet []*msgbridgev1alpha1.MessagingBridge, want map[string]string) string {
	t.Helper()
	var wrong string
	for _, mb := range fleet {
		var live msgbridgev1alpha1.MessagingBridge
		getObject(t, client.ObjectKeyFromObject(mb), &live)
		ready := meta.FindStatusCondition(live.Status.Conditions, msgbridgev1alpha1.ConditionReady)
		var cause string
		condType, _, _ := strings.Cut(want[mb.Name], "=")
		if c := meta.FindStatusCondition(live.Status.Conditions, condType); c != nil {
			cause = fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason)
		}
		if ready == nil || ready.Status != metav1.ConditionFalse || cause != want[mb.Name] {
			wrong += fmt.Sprintf("%s: Ready %v, %s (want %s); ", mb.Name, ready != nil && ready.Status == metav1.ConditionTrue, cause, want[mb.Name])
		}
	}
	return wrong
}
