package controllers

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
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

// Issue 18.8: status.session.state never says connected for a bridge that
// is suspended or cannot be asked; the last account and heartbeat stay. A
// suspend is reported as Normal: it is what the user asked for.
func TestSessionStateWhenNotObserved(t *testing.T) {
	ns := testNamespace(t)
	bridge := newFakeBridge(t, testAdminToken)
	startOperator(t, ns, operatorOptions{bridges: map[string]string{"sales": bridge.URL}})
	mb := newBridgeWithKeys(t, ns, "sales")
	bridge.set(connectedState(0))
	create(t, mb)
	markPodReady(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionTrue, conditions.ReasonConnected)

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Suspend = true })
	s := waitSessionState(t, mb, msgbridgev1alpha1.SessionSuspended)
	if s.Account != "4917012345678" || s.LastHeartbeatTime == nil {
		t.Errorf("suspended session lost the last account or heartbeat: %+v", s)
	}
	waitEvent(t, ns, "sales", corev1.EventTypeNormal, conditions.ReasonSuspended)
	if evs := findEvents(t, ns, "sales", corev1.EventTypeWarning, conditions.ReasonSuspended); len(evs) != 0 {
		t.Errorf("a suspend was reported as a Warning: %s", evs[0].Note)
	}

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Suspend = false })
	waitSessionState(t, mb, msgbridgev1alpha1.SessionConnected)
	bridge.Close()
	s = waitSessionState(t, mb, msgbridgev1alpha1.SessionUnknown)
	if s.Account != "4917012345678" {
		t.Errorf("unreachable session lost the last account: %+v", s)
	}
}

// Issue 18.8: the first Stalled event is reported once, although the next
// rounds may read a cached status that does not show it yet.
func TestFirstStalledEventOnce(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := newBridge(ns, "sales")
	mb.Spec.TOTPSecretRef = &msgbridgev1alpha1.SecretKeyReference{Name: "sales-totp", Key: "totp"}
	create(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonSecretNotFound)
	expectOneEvent(t, ns, "sales", corev1.EventTypeWarning, conditions.ReasonSecretNotFound)
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
