package controllers

import (
	"context"
	"fmt"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/conditions"
)

// waitDisruptionBudget waits until mb's PodDisruptionBudget exists (want)
// or is gone (!want), read with c.
func waitDisruptionBudget(t *testing.T, c client.Client, mb *msgbridgev1alpha1.MessagingBridge, want bool) *policyv1.PodDisruptionBudget {
	t.Helper()
	var pdb policyv1.PodDisruptionBudget
	eventually(t, 20*time.Second, func() (bool, string) {
		err := c.Get(context.Background(), client.ObjectKey{Namespace: mb.Namespace, Name: mb.Name}, &pdb)
		if client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		return (err == nil) == want, fmt.Sprintf("PodDisruptionBudget exists: %v, want %v", err == nil, want)
	})
	return &pdb
}

// Issue 32.5: no PodDisruptionBudget by default (with one pod it would block
// every drain of the node); spec.disruptionBudget.enabled keeps one that
// protects the ready pod and lets a broken one go, owned by the resource;
// turning it off deletes it.
func TestDisruptionBudget(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := newBridge(ns, "sales")
	create(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(mb), &policyv1.PodDisruptionBudget{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Fatalf("a PodDisruptionBudget without spec.disruptionBudget: %v", err)
	}

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.DisruptionBudget = &msgbridgev1alpha1.DisruptionBudgetSpec{Enabled: true}
	})
	pdb := waitDisruptionBudget(t, k8sClient, mb, true)
	var live msgbridgev1alpha1.MessagingBridge
	getObject(t, client.ObjectKeyFromObject(mb), &live)
	if !metav1.IsControlledBy(pdb, &live) || pdb.Spec.MinAvailable == nil || *pdb.Spec.MinAvailable != intstr.FromInt32(1) ||
		pdb.Spec.UnhealthyPodEvictionPolicy == nil || *pdb.Spec.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow ||
		pdb.Spec.Selector.MatchLabels["app.kubernetes.io/instance"] != "sales" {
		t.Errorf("PodDisruptionBudget %+v", pdb.Spec)
	}

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.DisruptionBudget.Enabled = false })
	waitDisruptionBudget(t, k8sClient, mb, false)
}

// A PodDisruptionBudget of the bridge's name that someone else made is
// never taken over (Stalled) nor deleted.
func TestDisruptionBudgetNeverTakesOverAnother(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	theirs := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sales"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptrIntOrString(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}},
	}
	create(t, theirs)
	mb := newBridge(ns, "sales")
	create(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	if pdb := waitDisruptionBudget(t, k8sClient, mb, true); pdb.UID != theirs.UID {
		t.Fatal("the operator replaced someone else's PodDisruptionBudget while the spec asks for none")
	}

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.DisruptionBudget = &msgbridgev1alpha1.DisruptionBudgetSpec{Enabled: true}
	})
	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonPodDisruptionBudgetConflict)
	if pdb := waitDisruptionBudget(t, k8sClient, mb, true); pdb.Spec.Selector.MatchLabels["app"] != "other" || len(pdb.OwnerReferences) != 0 {
		t.Errorf("someone else's PodDisruptionBudget was changed: %+v", pdb)
	}
}

func ptrIntOrString(v intstr.IntOrString) *intstr.IntOrString { return &v }
