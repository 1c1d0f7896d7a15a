package conditions

import (
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
)

var now = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func connected(heartbeatAge time.Duration) *bridgeclient.State {
	hb := now.Add(-heartbeatAge)
	return &bridgeclient.State{State: "connected", Connected: true, Account: "4917012345678", LastHeartbeat: &hb}
}

func TestSessionConnected(t *testing.T) {
	const interval = 15 * time.Second
	cases := []struct {
		name   string
		obs    SessionObservation
		status metav1.ConditionStatus
		reason string
	}{
		{"connected, fresh heartbeat", SessionObservation{PodReady: true, State: connected(10 * time.Second)}, metav1.ConditionTrue, ReasonConnected},
		{"heartbeat just under 3 intervals", SessionObservation{PodReady: true, State: connected(45*time.Second - time.Millisecond)}, metav1.ConditionTrue, ReasonConnected},
		{"heartbeat at 3 intervals: ghost", SessionObservation{PodReady: true, State: connected(45 * time.Second)}, metav1.ConditionFalse, ReasonHeartbeatStale},
		{"heartbeat from the future (clock skew)", SessionObservation{PodReady: true, State: connected(-5 * time.Second)}, metav1.ConditionTrue, ReasonConnected},
		{"connected without any heartbeat", SessionObservation{PodReady: true, State: &bridgeclient.State{State: "connected", Connected: true}}, metav1.ConditionFalse, ReasonHeartbeatStale},
		{"state and flag disagree", SessionObservation{PodReady: true, State: &bridgeclient.State{State: "connected", Connected: false}}, metav1.ConditionFalse, ReasonDisconnected},
		{"connecting", SessionObservation{PodReady: true, State: &bridgeclient.State{State: "connecting", Reason: "network"}}, metav1.ConditionFalse, ReasonDisconnected},
		{"disconnected", SessionObservation{PodReady: true, State: &bridgeclient.State{State: "disconnected", Reason: "stream_replaced"}}, metav1.ConditionFalse, ReasonDisconnected},
		{"disk full", SessionObservation{PodReady: true, State: &bridgeclient.State{State: "disconnected", Reason: "disk_full"}}, metav1.ConditionFalse, ReasonDiskFull},
		{"client outdated", SessionObservation{PodReady: true, State: &bridgeclient.State{State: "disconnected", Reason: "client_outdated"}}, metav1.ConditionFalse, ReasonClientOutdated},
		{"unknown state", SessionObservation{PodReady: true, State: &bridgeclient.State{State: "hibernating"}}, metav1.ConditionFalse, ReasonDisconnected},
		{"unpaired", SessionObservation{PodReady: true, State: &bridgeclient.State{State: "unpaired"}}, metav1.ConditionFalse, ReasonPairingRequired},
		{"pairing", SessionObservation{PodReady: true, State: &bridgeclient.State{State: "pairing"}}, metav1.ConditionFalse, ReasonPairingRequired},
		{"logged out", SessionObservation{PodReady: true, State: &bridgeclient.State{State: "logged_out"}}, metav1.ConditionFalse, ReasonLoggedOut},
		{"unreachable", SessionObservation{PodReady: true, Err: errors.New("connection refused")}, metav1.ConditionUnknown, ReasonStatusUnreachable},
		{"no ready pod", SessionObservation{}, metav1.ConditionUnknown, ReasonStatusUnreachable},
		{"suspended", SessionObservation{Suspended: true, State: connected(0)}, metav1.ConditionFalse, ReasonSuspended},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := SessionConnected(tc.obs, interval, now)
			if c.Type != msgbridgev1alpha1.ConditionSessionConnected || c.Status != tc.status || c.Reason != tc.reason || c.Message == "" {
				t.Errorf("got %s %s/%s %q, want %s/%s", c.Type, c.Status, c.Reason, c.Message, tc.status, tc.reason)
			}
		})
	}
}

// A stale heartbeat's message must not change from poll to poll, or every
// poll would write the status.
func TestSessionConnectedStaleMessageIsStable(t *testing.T) {
	state := connected(time.Minute)
	a := SessionConnected(SessionObservation{PodReady: true, State: state}, 15*time.Second, now)
	b := SessionConnected(SessionObservation{PodReady: true, State: state}, 15*time.Second, now.Add(30*time.Second))
	if a.Message != b.Message {
		t.Errorf("message changed between polls:\n%s\n%s", a.Message, b.Message)
	}
}

func TestAvailable(t *testing.T) {
	one, zero := int32(1), int32(0)
	ready := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &one}, Status: appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1}}
	stopping := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &zero}, Status: appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1}}
	stopped := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &zero}}
	refused := errors.New("denied by policy")
	cases := []struct {
		name     string
		sts      *appsv1.StatefulSet
		suspend  bool
		scaleErr error
		status   metav1.ConditionStatus
		reason   string
	}{
		{"ready pod", ready, false, nil, metav1.ConditionTrue, ReasonPodReady},
		{"no ready pod", &appsv1.StatefulSet{}, false, nil, metav1.ConditionFalse, ReasonPodNotReady},
		{"no StatefulSet yet", nil, false, nil, metav1.ConditionFalse, ReasonPodNotReady},
		{"suspended, scaled to zero", stopped, true, nil, metav1.ConditionFalse, ReasonSuspended},
		{"suspended, last pod stopping", stopping, true, nil, metav1.ConditionFalse, ReasonSuspended},
		{"suspended before any StatefulSet", nil, true, nil, metav1.ConditionFalse, ReasonSuspended},
		// Issue 32.1: the spec alone does not make a bridge suspended.
		{"suspend not applied yet", ready, true, nil, metav1.ConditionTrue, ReasonSuspendFailed},
		{"scale to zero refused", ready, true, refused, metav1.ConditionTrue, ReasonSuspendFailed},
		{"scale refused, pod not ready", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &one}}, true, refused, metav1.ConditionFalse, ReasonSuspendFailed},
	}
	for _, tc := range cases {
		c := Available(tc.sts, tc.suspend, tc.scaleErr)
		if c.Status != tc.status || c.Reason != tc.reason {
			t.Errorf("%s: %s/%s (%s), want %s/%s", tc.name, c.Status, c.Reason, c.Message, tc.status, tc.reason)
		}
		if tc.scaleErr != nil && !strings.Contains(c.Message, tc.scaleErr.Error()) {
			t.Errorf("%s: message %q does not say why", tc.name, c.Message)
		}
		if Suspended(c) != (tc.reason == ReasonSuspended) {
			t.Errorf("%s: Suspended %v", tc.name, Suspended(c))
		}
	}
}

// Issue 32.5: kubectl describe shows a blocker's message once, in Stalled,
// not again in Reconciled and Ready.
func TestBlockerMessageShownOnce(t *testing.T) {
	b := &Blocker{Reason: ReasonSecretNotFound, Message: "Secret sales-keys (for API_KEY) not found"}
	reconciled := Reconciled(b, nil)
	available := Available(nil, false, nil)
	session := SessionConnected(SessionObservation{}, 15*time.Second, now)
	count := 0
	for _, c := range []metav1.Condition{Stalled(b), reconciled, Ready(reconciled, available, session)} {
		count += strings.Count(c.Message, b.Message)
		if c.Reason != b.Reason && c.Type != msgbridgev1alpha1.ConditionReady {
			t.Errorf("%s reason %s, want %s", c.Type, c.Reason, b.Reason)
		}
	}
	if count != 1 {
		t.Errorf("the blocker's message appears %d times, want once", count)
	}
}

func TestStalledAndReconciled(t *testing.T) {
	b := &Blocker{Reason: ReasonSecretNotFound, Message: "Secret x not found"}
	cases := []struct {
		name       string
		blocker    *Blocker
		err        error
		stalled    metav1.ConditionStatus
		reconciled string
	}{
		{"all well", nil, nil, metav1.ConditionFalse, ReasonReconciled},
		{"blocked", b, nil, metav1.ConditionTrue, ReasonSecretNotFound},
		// An API error retries by itself: not stalled.
		{"apply failed", nil, errors.New("conflict"), metav1.ConditionFalse, ReasonApplyFailed},
	}
	for _, tc := range cases {
		if s := Stalled(tc.blocker); s.Status != tc.stalled {
			t.Errorf("%s: Stalled %s, want %s", tc.name, s.Status, tc.stalled)
		}
		if r := Reconciled(tc.blocker, tc.err); r.Reason != tc.reconciled || (r.Status == metav1.ConditionTrue) != (tc.reconciled == ReasonReconciled) {
			t.Errorf("%s: Reconciled %s/%s, want reason %s", tc.name, r.Status, r.Reason, tc.reconciled)
		}
	}
}

func TestReady(t *testing.T) {
	yes := func(t, reason string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason}
	}
	no := func(t string, s metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: "why"}
	}
	rec, avail, sess := msgbridgev1alpha1.ConditionReconciled, msgbridgev1alpha1.ConditionAvailable, msgbridgev1alpha1.ConditionSessionConnected
	cases := []struct {
		name                        string
		reconciled, available, sess metav1.Condition
		status                      metav1.ConditionStatus
		reason                      string
	}{
		{"all true", yes(rec, ReasonReconciled), yes(avail, ReasonPodReady), yes(sess, ReasonConnected), metav1.ConditionTrue, ReasonReady},
		{"stalled first", no(rec, metav1.ConditionFalse, ReasonSecretNotFound), no(avail, metav1.ConditionFalse, ReasonPodNotReady), yes(sess, ReasonConnected), metav1.ConditionFalse, ReasonSecretNotFound},
		{"pod not ready", yes(rec, ReasonReconciled), no(avail, metav1.ConditionFalse, ReasonPodNotReady), no(sess, metav1.ConditionUnknown, ReasonStatusUnreachable), metav1.ConditionFalse, ReasonPodNotReady},
		{"waiting for pairing", yes(rec, ReasonReconciled), yes(avail, ReasonPodReady), no(sess, metav1.ConditionFalse, ReasonPairingRequired), metav1.ConditionFalse, ReasonPairingRequired},
		{"unreachable is not ready", yes(rec, ReasonReconciled), yes(avail, ReasonPodReady), no(sess, metav1.ConditionUnknown, ReasonStatusUnreachable), metav1.ConditionFalse, ReasonStatusUnreachable},
	}
	for _, tc := range cases {
		c := Ready(tc.reconciled, tc.available, tc.sess)
		if c.Status != tc.status || c.Reason != tc.reason {
			t.Errorf("%s: Ready %s/%s, want %s/%s", tc.name, c.Status, c.Reason, tc.status, tc.reason)
		}
	}
}

func TestSendingRestricted(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	later, earlier := now.Add(90*time.Minute), now.Add(-time.Second)
	state := func(until *time.Time) *bridgeclient.State {
		return &bridgeclient.State{State: "connected", Connected: true, RestrictedUntil: until}
	}
	for _, tc := range []struct {
		name   string
		obs    SessionObservation
		status metav1.ConditionStatus
		reason string
	}{
		{"restricted", SessionObservation{PodReady: true, State: state(&later)}, metav1.ConditionTrue, ReasonRestricted},
		{"not restricted", SessionObservation{PodReady: true, State: state(nil)}, metav1.ConditionFalse, ReasonNotRestricted},
		{"ended", SessionObservation{PodReady: true, State: state(&earlier)}, metav1.ConditionFalse, ReasonNotRestricted},
		{"suspended", SessionObservation{Suspended: true}, metav1.ConditionFalse, ReasonSuspended},
		{"no pod", SessionObservation{}, metav1.ConditionUnknown, ReasonStatusUnreachable},
		{"unreachable", SessionObservation{PodReady: true, Err: errors.New("refused")}, metav1.ConditionUnknown, ReasonStatusUnreachable},
	} {
		c := SendingRestricted(tc.obs, now)
		if c.Type != msgbridgev1alpha1.ConditionSendingRestricted || c.Status != tc.status || c.Reason != tc.reason {
			t.Errorf("%s: %s/%s (%s)", tc.name, c.Status, c.Reason, c.Message)
		}
		if tc.status == metav1.ConditionTrue && !strings.Contains(c.Message, "2026-11-21T11:30:00Z") {
			t.Errorf("%s: message %q does not name the end", tc.name, c.Message)
		}
	}
}
