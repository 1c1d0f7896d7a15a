package controllers

import (
	"context"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/bridgeclient"
	"github.com/msgbridge/msgbridge/controllers/conditions"
)

// The status mirrors what a bridge served over real HTTP reports: each
// session situation of the contract gives its condition, and the
// metrics follow.
func TestSessionStatusMirrorsBridge(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	bridge := newFakeBridge(t, testAdminToken)
	startOperator(t, ns, operatorOptions{bridges: map[string]string{"sales": bridge.URL}})
	mb := newBridgeWithKeys(t, ns, "sales")
	mb.Spec.HeartbeatInterval = &metav1.Duration{Duration: 10 * time.Second}
	bridge.set(connectedState(0))
	create(t, mb)
	markPodReady(t, mb)

	got := waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionTrue, conditions.ReasonConnected)
	if s := got.Status.Session; s == nil || s.State != msgbridgev1alpha1.SessionConnected || s.Account != "4917012345678" ||
		s.LastHeartbeatTime == nil || s.LastProbeTime == nil {
		t.Errorf("session: %+v", got.Status.Session)
	}
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReady, metav1.ConditionTrue, conditions.ReasonReady)
	if v := gaugeValue(t, sessionConnectedGauge.WithLabelValues(ns, "sales")); v != 1 {
		t.Errorf("messagingbridge_session_connected %v", v)
	}
	if v := gaugeValue(t, lastHeartbeatGauge.WithLabelValues(ns, "sales")); v < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("messagingbridge_last_heartbeat_timestamp_seconds %v", v)
	}

	steps := []struct {
		name   string
		state  bridgeclient.State
		status metav1.ConditionStatus
		reason string
	}{
		// The socket claims to be up but nothing proved it for 3 intervals:
		// a ghost connection.
		{"stale heartbeat", connectedState(time.Minute), metav1.ConditionFalse, conditions.ReasonHeartbeatStale},
		{"logged out", bridgeclient.State{State: "logged_out", Reason: "logged_out_from_phone"}, metav1.ConditionFalse, conditions.ReasonLoggedOut},
		{"pairing", bridgeclient.State{State: "unpaired"}, metav1.ConditionFalse, conditions.ReasonPairingRequired},
		{"reconnecting", bridgeclient.State{State: "connecting", Reason: "keepalive_timeout"}, metav1.ConditionFalse, conditions.ReasonDisconnected},
		{"connected again", connectedState(0), metav1.ConditionTrue, conditions.ReasonConnected},
	}
	for _, s := range steps {
		bridge.set(s.state)
		got := waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, s.status, s.reason)
		ready := findCondition(got, msgbridgev1alpha1.ConditionReady)
		if wantReady := s.status == metav1.ConditionTrue; (ready.Status == metav1.ConditionTrue) != wantReady {
			t.Errorf("%s: Ready %s/%s", s.name, ready.Status, ready.Reason)
		}
		if got.Status.Session == nil || string(got.Status.Session.State) != string(s.state.State) {
			t.Errorf("%s: session %+v", s.name, got.Status.Session)
		}
	}
	waitEvent(t, ns, "sales", corev1.EventTypeWarning, conditions.ReasonHeartbeatStale)
	waitEvent(t, ns, "sales", corev1.EventTypeWarning, conditions.ReasonLoggedOut)

	// An unreachable bridge is Unknown, never its last True.
	bridge.Close()
	got = waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionUnknown, conditions.ReasonStatusUnreachable)
	if c := findCondition(got, msgbridgev1alpha1.ConditionReady); c.Status != metav1.ConditionFalse {
		t.Errorf("Ready with an unreachable bridge: %+v", c)
	}
	if v := gaugeValue(t, sessionConnectedGauge.WithLabelValues(ns, "sales")); v != 0 {
		t.Errorf("messagingbridge_session_connected %v with an unreachable bridge", v)
	}
}

// kstatus, which Flux and kubectl wait use, reads Current only for a Ready
// bridge: InProgress while new, unavailable or unpaired, Failed when stalled.
func TestKstatusReadsCurrentOnlyWhenReady(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	bridge := newFakeBridge(t, testAdminToken)
	bridge.set(bridgeclient.State{State: "unpaired"})
	mb := newBridgeWithKeys(t, ns, "sales")
	create(t, mb)
	// Before any operator saw it.
	if s := kstatusOf(t, mb); s != kstatus.InProgressStatus {
		t.Errorf("new resource: %s, want InProgress", s)
	}

	startOperator(t, ns, operatorOptions{bridges: map[string]string{"sales": bridge.URL}})
	waitCondition(t, mb, msgbridgev1alpha1.ConditionAvailable, metav1.ConditionFalse, conditions.ReasonPodNotReady)
	if s := kstatusOf(t, mb); s != kstatus.InProgressStatus {
		t.Errorf("pod not ready: %s, want InProgress", s)
	}
	markPodReady(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionFalse, conditions.ReasonPairingRequired)
	if s := kstatusOf(t, mb); s != kstatus.InProgressStatus {
		t.Errorf("waiting for pairing: %s, want InProgress", s)
	}
	bridge.set(connectedState(0))
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReady, metav1.ConditionTrue, conditions.ReasonReady)
	if s := kstatusOf(t, mb); s != kstatus.CurrentStatus {
		t.Errorf("ready: %s, want Current", s)
	}

	// A new generation not yet observed is InProgress, whatever the
	// conditions say; the operator's next status makes it Current again.
	stalled := newBridge(ns, "stalled")
	stalled.Spec.APIKeySecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: "absent", Key: "apiKey"}
	create(t, stalled)
	waitCondition(t, stalled, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonSecretNotFound)
	if s := kstatusOf(t, stalled); s != kstatus.FailedStatus {
		t.Errorf("stalled: %s, want Failed", s)
	}
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

func kstatusOf(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge) kstatus.Status {
	t.Helper()
	var live msgbridgev1alpha1.MessagingBridge
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(mb), &live); err != nil {
		t.Fatal(err)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&live)
	if err != nil {
		t.Fatal(err)
	}
	res, err := kstatus.Compute(&unstructured.Unstructured{Object: obj})
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

// At steady state, polls go on but nothing is written: no API write request
// from the operator and no resourceVersion change of the resource or of any
// object it owns, over many polls.
func TestSteadyStateCausesNoWrites(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	bridge := newFakeBridge(t, testAdminToken)
	bridge.set(connectedState(0))
	var writes atomic.Int64
	startOperator(t, ns, operatorOptions{
		pollInterval: 50 * time.Millisecond,
		bridges:      map[string]string{"sales": bridge.URL},
		wrap:         func(c client.Client) client.Client { return writeCounter{Client: c, count: func() { writes.Add(1) }} },
	})
	mb := newBridgeWithKeys(t, ns, "sales")
	mb.Spec.LogoutOnDelete = true // the finalizer is part of the steady state too
	create(t, mb)
	markPodReady(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReady, metav1.ConditionTrue, conditions.ReasonReady)

	// Ready can be seen while the write that made it, or one after it, is
	// still on its way: the steady state starts once five polls pass
	// without a write.
	var before map[string]string
	var settled int64
	eventually(t, 30*time.Second, func() (bool, string) {
		settled, before = writes.Load(), resourceVersions(t, mb)
		waitPolls(t, bridge, 5)
		return writes.Load() == settled && maps.Equal(resourceVersions(t, mb), before), "the operator still writes"
	})
	polls := bridge.polls.Load()
	// The heartbeat moves on every poll, as a live bridge's does.
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				bridge.set(connectedState(0))
			}
		}
	}()
	waitPolls(t, bridge, 20)
	close(stop)
	if n := writes.Load() - settled; n != 0 {
		t.Errorf("%d API writes at steady state over %d polls", n, bridge.polls.Load()-polls)
	}
	after := resourceVersions(t, mb)
	for kind, rv := range before {
		if after[kind] != rv {
			t.Errorf("%s resourceVersion moved from %s to %s at steady state", kind, rv, after[kind])
		}
	}
}

// waitPolls waits until the operator polled bridge n more times.
func waitPolls(t *testing.T, bridge *fakeBridge, n int64) {
	t.Helper()
	from := bridge.polls.Load()
	eventually(t, 30*time.Second, func() (bool, string) {
		return bridge.polls.Load()-from >= n, "too few polls"
	})
}

func resourceVersions(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge) map[string]string {
	t.Helper()
	out := map[string]string{}
	for kind, obj := range map[string]client.Object{
		"MessagingBridge":  &msgbridgev1alpha1.MessagingBridge{},
		"StatefulSet":      &appsv1.StatefulSet{},
		"Service":          &corev1.Service{},
		"generated Secret": &corev1.Secret{},
	} {
		name := mb.Name
		if kind == "generated Secret" {
			name += "-generated"
		}
		if !getObject(t, client.ObjectKey{Namespace: mb.Namespace, Name: name}, obj) {
			t.Fatalf("%s %s not found", kind, name)
		}
		out[kind] = obj.GetResourceVersion()
	}
	return out
}

// logoutOnDelete: deleting logs the bridge out with its admin token, then
// lets the deletion finish.
func TestLogoutOnDelete(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	bridge := newFakeBridge(t, testAdminToken)
	bridge.set(connectedState(0))
	startOperator(t, ns, operatorOptions{bridges: map[string]string{"sales": bridge.URL, "gone": "http://127.0.0.1:1"}})

	mb := newBridgeWithKeys(t, ns, "sales")
	mb.Spec.LogoutOnDelete = true
	create(t, mb)
	eventually(t, 20*time.Second, func() (bool, string) {
		var got msgbridgev1alpha1.MessagingBridge
		getObject(t, client.ObjectKeyFromObject(mb), &got)
		return len(got.Finalizers) == 1 && got.Finalizers[0] == LogoutFinalizer, "finalizer not added"
	})
	if err := k8sClient.Delete(context.Background(), mb); err != nil {
		t.Fatal(err)
	}
	waitGone(t, mb)
	if n := bridge.logouts.Load(); n != 1 {
		t.Errorf("%d logouts, want 1", n)
	}
	waitEvent(t, ns, "sales", corev1.EventTypeNormal, "LoggedOut")

	// A bridge that cannot be reached does not hold the deletion.
	gone := newBridgeWithKeys(t, ns, "gone")
	gone.Spec.LogoutOnDelete = true
	create(t, gone)
	eventually(t, 20*time.Second, func() (bool, string) {
		var got msgbridgev1alpha1.MessagingBridge
		getObject(t, client.ObjectKeyFromObject(gone), &got)
		return len(got.Finalizers) == 1, "finalizer not added"
	})
	start := time.Now()
	if err := k8sClient.Delete(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	waitGone(t, gone)
	if d := time.Since(start); d > LogoutDeadline {
		t.Errorf("deletion took %s", d)
	}
	waitEvent(t, ns, "gone", corev1.EventTypeWarning, "LogoutFailed")
}

func waitGone(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge) {
	t.Helper()
	eventually(t, 40*time.Second, func() (bool, string) {
		var got msgbridgev1alpha1.MessagingBridge
		return !getObject(t, client.ObjectKeyFromObject(mb), &got), "still there"
	})
}

// writeCounter counts the operator's write requests, the status included.
type writeCounter struct {
	client.Client
	count func()
}

func (w writeCounter) Create(ctx context.Context, o client.Object, opts ...client.CreateOption) error {
	w.count()
	return w.Client.Create(ctx, o, opts...)
}

func (w writeCounter) Update(ctx context.Context, o client.Object, opts ...client.UpdateOption) error {
	w.count()
	return w.Client.Update(ctx, o, opts...)
}

func (w writeCounter) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.PatchOption) error {
	w.count()
	return w.Client.Patch(ctx, o, p, opts...)
}

func (w writeCounter) Apply(ctx context.Context, o runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	w.count()
	return w.Client.Apply(ctx, o, opts...)
}

func (w writeCounter) Delete(ctx context.Context, o client.Object, opts ...client.DeleteOption) error {
	w.count()
	return w.Client.Delete(ctx, o, opts...)
}

func (w writeCounter) Status() client.SubResourceWriter {
	return statusWriteCounter{SubResourceWriter: w.Client.Status(), count: w.count}
}

type statusWriteCounter struct {
	client.SubResourceWriter
	count func()
}

func (w statusWriteCounter) Update(ctx context.Context, o client.Object, opts ...client.SubResourceUpdateOption) error {
	w.count()
	return w.SubResourceWriter.Update(ctx, o, opts...)
}

func (w statusWriteCounter) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	w.count()
	return w.SubResourceWriter.Patch(ctx, o, p, opts...)
}
