package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/conditions"
)

// replicasAre waits for a StatefulSet that asks for n replicas.
func replicasAre(n int32) func(*appsv1.StatefulSet) (bool, string) {
	return func(sts *appsv1.StatefulSet) (bool, string) {
		got := ptr.Deref(sts.Spec.Replicas, 1)
		return got == n, fmt.Sprintf("StatefulSet asks for %d replicas, want %d", got, n)
	}
}

// runningBridge is a MessagingBridge with its own keys whose StatefulSet
// was applied with one ready replica.
func runningBridge(t *testing.T, ns, name string) *msgbridgev1alpha1.MessagingBridge {
	t.Helper()
	mb := newBridgeWithKeys(t, ns, name)
	create(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	waitStatefulSet(t, mb, replicasAre(1))
	markPodReady(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionAvailable, metav1.ConditionTrue, conditions.ReasonPodReady)
	return mb
}

// Issue 32.1: a stall ends the apply steps before the StatefulSet, yet
// suspending a stalled bridge scales it to zero; the stall itself stays
// reported, and the status says suspended only once the StatefulSet is.
func TestSuspendStalledBridgeScalesToZero(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	stalls := []struct {
		name, reason string
		stall        func(mb *msgbridgev1alpha1.MessagingBridge)
	}{
		{"key-lost", conditions.ReasonEncryptionKeyLost, func(mb *msgbridgev1alpha1.MessagingBridge) {
			setSecretKey(t, ns, mb.Name+"-keys", "encryptionKey", strings.Repeat("cd", 32))
		}},
		{"apply-rejected", conditions.ReasonApplyRejected, func(mb *msgbridgev1alpha1.MessagingBridge) {
			patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
				mb.Spec.Resources = corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				}
			})
		}},
	}
	for _, tc := range stalls {
		t.Run(tc.name, func(t *testing.T) {
			mb := runningBridge(t, ns, tc.name)
			tc.stall(mb)
			waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, tc.reason)

			patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Suspend = true })
			waitStatefulSet(t, mb, replicasAre(0))
			waitCondition(t, mb, msgbridgev1alpha1.ConditionAvailable, metav1.ConditionFalse, conditions.ReasonSuspended)
			waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, tc.reason)

			// Resuming a bridge that is still stalled starts nothing.
			patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Suspend = false })
			waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, tc.reason)
			if sts := waitStatefulSet(t, mb, anyStatefulSet); ptr.Deref(sts.Spec.Replicas, 1) != 0 {
				t.Errorf("a stalled bridge was started again on resume: %d replicas", *sts.Spec.Replicas)
			}
		})
	}
}

// Issue 32.1: a suspend the API server refuses is reported as such, with
// the refusal, instead of a status that calls the running bridge suspended.
func TestRefusedSuspendIsReported(t *testing.T) {
	ns := testNamespace(t)
	denyScaleToZero(t, ns)
	startOperator(t, ns, operatorOptions{})
	mb := runningBridge(t, ns, "pinned")

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.Suspend = true })
	got := waitCondition(t, mb, msgbridgev1alpha1.ConditionAvailable, metav1.ConditionTrue, conditions.ReasonSuspendFailed)
	if msg := conditionMessage(got, msgbridgev1alpha1.ConditionAvailable); !strings.Contains(msg, "bridges stay up") {
		t.Errorf("Available message %q does not give the refusal", msg)
	}
	if got.Status.Session != nil && got.Status.Session.State == msgbridgev1alpha1.SessionSuspended {
		t.Error("the session is reported suspended while the bridge runs")
	}
	if sts := waitStatefulSet(t, mb, anyStatefulSet); ptr.Deref(sts.Spec.Replicas, 1) != 1 {
		t.Errorf("replicas %d, the policy should have kept 1", *sts.Spec.Replicas)
	}
	script, err := os.ReadFile(filepath.Join(chartDir, "files", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if status, message := argoCDHealth(t, string(script), liveObject(t, mb)); status != "Degraded" {
		t.Errorf("Argo CD health %s (%s), want Degraded", status, message)
	}
}

// denyScaleToZero installs a ValidatingAdmissionPolicy, enforced by the real
// API server, that refuses a StatefulSet of ns with zero replicas.
func denyScaleToZero(t *testing.T, ns string) {
	t.Helper()
	name := "deny-scale-to-zero-" + ns
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"statefulsets"},
						},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!has(object.spec.replicas) || object.spec.replicas > 0",
				Message:    "bridges stay up in this namespace",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: name,
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			},
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	create(t, policy)
	create(t, binding)
	t.Cleanup(func() {
		_ = k8sClient.Delete(context.Background(), binding)
		_ = k8sClient.Delete(context.Background(), policy)
	})
	// The policy reaches the admission plugin asynchronously: wait until it
	// refuses a StatefulSet of its own.
	probe := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "policy-probe"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "probe"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "probe"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
			},
		},
	}
	create(t, probe)
	eventually(t, 20*time.Second, func() (bool, string) {
		var live appsv1.StatefulSet
		getObject(t, client.ObjectKeyFromObject(probe), &live)
		live.Spec.Replicas = ptr.To(int32(0))
		err := k8sClient.Update(context.Background(), &live)
		return err != nil && strings.Contains(err.Error(), "bridges stay up"), fmt.Sprintf("the policy is not enforced yet: %v", err)
	})
}

// Issue 32.5: the status names the running image, the pod and the claim;
// a suspended bridge has no pod.
func TestStatusNamesTheWorkload(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := runningBridge(t, ns, "sales")
	want := msgbridgev1alpha1.WorkloadStatus{Image: testImage, Pod: "sales-0", Claim: "data-sales-0"}
	eventually(t, 20*time.Second, func() (bool, string) {
		var got msgbridgev1alpha1.MessagingBridge
		getObject(t, client.ObjectKeyFromObject(mb), &got)
		return got.Status.Workload != nil && *got.Status.Workload == want, fmt.Sprintf("workload %+v, want %+v", got.Status.Workload, want)
	})
	sts := waitStatefulSet(t, mb, anyStatefulSet)
	patch := client.MergeFrom(sts.DeepCopy())
	sts.Status.Replicas, sts.Status.ReadyReplicas, sts.Status.CurrentReplicas = 0, 0, 0
	sts.Status.UpdatedReplicas, sts.Status.AvailableReplicas = 0, 0
	if err := k8sClient.Status().Patch(context.Background(), sts, patch); err != nil {
		t.Fatal(err)
	}
	want.Pod = ""
	eventually(t, 20*time.Second, func() (bool, string) {
		var got msgbridgev1alpha1.MessagingBridge
		getObject(t, client.ObjectKeyFromObject(mb), &got)
		return got.Status.Workload != nil && *got.Status.Workload == want, fmt.Sprintf("workload %+v, want %+v", got.Status.Workload, want)
	})
}
