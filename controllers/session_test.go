package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/conditions"
)

// waitSessionState waits until status.session.state reads want.
func waitSessionState(t *testing.T, mb *msgbridgev1alpha1.MessagingBridge, want msgbridgev1alpha1.SessionState) *msgbridgev1alpha1.SessionStatus {
	t.Helper()
	var got msgbridgev1alpha1.MessagingBridge
	eventually(t, 20*time.Second, func() (bool, string) {
		getObject(t, client.ObjectKeyFromObject(mb), &got)
		if got.Status.Session == nil {
			return false, "no session status"
		}
		return got.Status.Session.State == want, "session state " + string(got.Status.Session.State) + ", want " + string(want)
	})
	return got.Status.Session
}

// connectedBridge is a MessagingBridge "sales" in a new namespace whose
// (fake) bridge reports a live session, once its status says so.
func connectedBridge(t *testing.T) (string, *msgbridgev1alpha1.MessagingBridge, *fakeBridge) {
	t.Helper()
	ns := testNamespace(t)
	bridge := newFakeBridge(t, testAdminToken)
	startOperator(t, ns, operatorOptions{bridges: map[string]string{"sales": bridge.URL}})
	mb := newBridgeWithKeys(t, ns, "sales")
	bridge.set(connectedState(0))
	create(t, mb)
	markPodReady(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionTrue, conditions.ReasonConnected)
	return ns, mb, bridge
}

// Issue 18.8: status.session.state never says connected for a bridge that
// is suspended or cannot be asked; the last account and heartbeat stay.
func TestSessionStateWhenNotObserved(t *testing.T) {
	_, mb, bridge := connectedBridge(t)

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Suspend = true })
	s := waitSessionState(t, mb, msgbridgev1alpha1.SessionSuspended)
	if s.Account != "4917012345678" || s.LastHeartbeatTime == nil {
		t.Errorf("suspended session lost the last account or heartbeat: %+v", s)
	}

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Suspend = false })
	waitSessionState(t, mb, msgbridgev1alpha1.SessionConnected)
	bridge.Close()
	s = waitSessionState(t, mb, msgbridgev1alpha1.SessionUnknown)
	if s.Account != "4917012345678" {
		t.Errorf("unreachable session lost the last account: %+v", s)
	}
}

// Issue 18.8: a suspend is reported as Normal: it is what the user asked
// for, not a failure.
func TestSuspendIsNormalEvent(t *testing.T) {
	ns, mb, _ := connectedBridge(t)

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Suspend = true })
	waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionFalse, conditions.ReasonSuspended)
	eventually(t, 10*time.Second, func() (bool, string) {
		normal := findEvents(t, ns, "sales", corev1.EventTypeNormal, conditions.ReasonSuspended)
		warning := findEvents(t, ns, "sales", corev1.EventTypeWarning, conditions.ReasonSuspended)
		return len(normal) == 1 && len(warning) == 0, fmt.Sprintf("%d Normal and %d Warning Suspended events, want 1 and 0", len(normal), len(warning))
	})
}

// staleBridges serves MessagingBridges as a lagging cache does: every Get
// returns the object as first read, although the status was written since.
type staleBridges struct {
	client.Client
	first map[client.ObjectKey]*msgbridgev1alpha1.MessagingBridge
}

func (s *staleBridges) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	mb, ok := obj.(*msgbridgev1alpha1.MessagingBridge)
	if !ok {
		return s.Client.Get(ctx, key, obj, opts...)
	}
	if snap, seen := s.first[key]; seen {
		snap.DeepCopyInto(mb)
		return nil
	}
	if err := s.Client.Get(ctx, key, mb, opts...); err != nil {
		return err
	}
	s.first[key] = mb.DeepCopy()
	return nil
}

// countingRecorder counts events by type and reason.
type countingRecorder struct {
	mu    sync.Mutex
	count map[string]int
}

func (c *countingRecorder) Eventf(_ runtime.Object, _ runtime.Object, eventType, reason, _, _ string, _ ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count[eventType+"/"+reason]++
}

// Issue 18.8: the first Stalled event is reported once although the next
// round reads, from a cache that lags, a status without it. The reconciler
// runs here without a manager, on a client that plays the lagging cache.
func TestStaleCacheReportsStalledOnce(t *testing.T) {
	ns := testNamespace(t)
	mb := newBridge(ns, "sales")
	mb.Spec.TOTPSecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: "sales-totp", Key: "totp"}
	create(t, mb)
	rec := &countingRecorder{count: map[string]int{}}
	r := &MessagingBridgeReconciler{
		Client:    &staleBridges{Client: k8sClient, first: map[client.ObjectKey]*msgbridgev1alpha1.MessagingBridge{}},
		Recorder:  rec,
		BridgeURL: func(*msgbridgev1alpha1.MessagingBridge) string { return "http://127.0.0.1:1" },
	}
	for range 3 {
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(mb)}); err != nil {
			t.Fatal(err)
		}
	}
	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonSecretNotFound)
	if n := rec.count[corev1.EventTypeWarning+"/"+conditions.ReasonSecretNotFound]; n != 1 {
		t.Errorf("%d Warning SecretNotFound events over 3 rounds, want 1", n)
	}
}

// Issue 18.8: kubectl get mb shows why a bridge is not ready, so that a
// stalled bridge does not look like one whose pod is starting. The API
// server's own Table rendering is what kubectl prints.
func TestReasonColumn(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := newBridge(ns, "sales")
	mb.Spec.TOTPSecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: "sales-totp", Key: "totp"}
	create(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReady, metav1.ConditionFalse, conditions.ReasonSecretNotFound)

	cs := kubernetes.NewForConfigOrDie(restConfig)
	raw, err := cs.RESTClient().Get().AbsPath("/apis/msgbridge.io/v1alpha1/namespaces", ns, "messagingbridges").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	cells := map[string]any{}
	for i, c := range table.ColumnDefinitions {
		if c.Priority == 0 && len(table.Rows) == 1 {
			cells[c.Name] = table.Rows[0].Cells[i]
		}
	}
	if cells["Reason"] != conditions.ReasonSecretNotFound || cells["Ready"] != "False" || cells["Connected"] != "Unknown" {
		t.Errorf("kubectl get mb shows %v; want Ready False, Connected Unknown, Reason %s", cells, conditions.ReasonSecretNotFound)
	}
}
