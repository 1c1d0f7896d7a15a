package controllers

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/conditions"
)

// expectOneEvent waits for the event, lets several polls pass, and checks
// that it was reported once: events.k8s.io turns a repeat into a series.
func expectOneEvent(t *testing.T, ns, name, eventType, reason string) {
	t.Helper()
	waitEvent(t, ns, name, eventType, reason)
	time.Sleep(2 * time.Second) // ten polls of the test operator
	evs := findEvents(t, ns, name, eventType, reason)
	if len(evs) != 1 || evs[0].Series != nil {
		count := len(evs)
		if len(evs) == 1 {
			count = int(evs[0].Series.Count)
		}
		t.Errorf("%s event %s reported %d times, want once", eventType, reason, count)
	}
}

// Issue 18.1: a Service of the bridge's name that the operator did not
// create is the user's: it is never changed nor owned, the resource stalls
// with a Warning, and it recovers once the Service is gone.
func TestNeverTakesOverUserService(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	user := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "80-8080", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}
	create(t, user)
	mb := newBridge(ns, "web")
	create(t, mb)

	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonServiceConflict)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionFalse, conditions.ReasonServiceConflict)
	if got := kstatusOf(t, mb); got != kstatus.FailedStatus {
		t.Errorf("kstatus %s, want Failed", got)
	}
	expectOneEvent(t, ns, "web", corev1.EventTypeWarning, conditions.ReasonServiceConflict)
	var live corev1.Service
	getObject(t, client.ObjectKeyFromObject(user), &live)
	if !reflect.DeepEqual(live.Spec.Selector, user.Spec.Selector) || len(live.Spec.Ports) != 1 || len(live.OwnerReferences) != 0 || len(live.Labels) != 0 {
		t.Errorf("the user's Service was changed: selector %v, ports %v, owners %v, labels %v",
			live.Spec.Selector, live.Spec.Ports, live.OwnerReferences, live.Labels)
	}
	if len(live.ManagedFields) != 1 {
		t.Errorf("managed fields %d, want only the user's", len(live.ManagedFields))
	}

	if err := k8sClient.Delete(context.Background(), &live); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionFalse, conditions.ReasonNotStalled)
	owner := waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	var svc corev1.Service
	if !getObject(t, client.ObjectKeyFromObject(user), &svc) || !metav1.IsControlledBy(&svc, owner) {
		t.Error("the bridge's own Service was not created")
	}
}

// Issue 18.1: the same guard holds for the StatefulSet.
func TestNeverTakesOverUserStatefulSet(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	labels := map[string]string{"app": "db"}
	user := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "postgres:17"}}},
			},
		},
	}
	create(t, user)
	mb := newBridge(ns, "db")
	create(t, mb)

	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonStatefulSetConflict)
	expectOneEvent(t, ns, "db", corev1.EventTypeWarning, conditions.ReasonStatefulSetConflict)
	var live appsv1.StatefulSet
	getObject(t, client.ObjectKeyFromObject(user), &live)
	if live.Generation != 1 || len(live.OwnerReferences) != 0 || live.Spec.Template.Spec.Containers[0].Image != "postgres:17" {
		t.Errorf("the user's StatefulSet was changed: generation %d, owners %v", live.Generation, live.OwnerReferences)
	}

	if err := k8sClient.Delete(context.Background(), &live); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	sts := waitStatefulSet(t, mb, anyStatefulSet)
	if len(sts.OwnerReferences) != 1 || sts.OwnerReferences[0].Name != "db" {
		t.Errorf("StatefulSet owners %v, want the MessagingBridge", sts.OwnerReferences)
	}
}

// Issue 18.2: an apply the API server refuses for good (requests above
// limits) stalls, which kstatus reads as Failed, with one Warning; fixing
// the spec recovers.
func TestRefusedApplyStalls(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	mb := newBridge(ns, "greedy")
	mb.Spec.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}
	create(t, mb)

	got := waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonApplyRejected)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionFalse, conditions.ReasonApplyRejected)
	if st := kstatusOf(t, mb); st != kstatus.FailedStatus {
		t.Errorf("kstatus %s, want Failed", st)
	}
	t.Logf("Stalled message: %s", conditionMessage(got, msgbridgev1alpha1.ConditionStalled))
	expectOneEvent(t, ns, "greedy", corev1.EventTypeWarning, conditions.ReasonApplyRejected)

	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) {
		mb.Spec.Resources.Limits[corev1.ResourceCPU] = resource.MustParse("2")
	})
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionFalse, conditions.ReasonNotStalled)
}

func conditionMessage(mb *msgbridgev1alpha1.MessagingBridge, condType string) string {
	for _, c := range mb.Status.Conditions {
		if c.Type == condType {
			return c.Message
		}
	}
	return ""
}

// Issue 18.5: a credential the bridge would refuse at start-up stalls with
// InvalidSecret, before any pod crash-loops, and fixing it recovers.
func TestInvalidCredentialsStall(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{})
	cases := []struct{ name, key, value, fixed string }{
		{"short-api-key", "apiKey", "short", "api-key-fixed-0123456789"},
		{"not-hex", "encryptionKey", "nothex", strings.Repeat("cd", 32)},
		{"same-tokens", "adminToken", "api-key-0123456789abcdef", testAdminToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mb := newBridgeWithKeys(t, ns, tc.name)
			setSecretKey(t, ns, tc.name+"-keys", tc.key, tc.value)
			create(t, mb)
			waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonInvalidSecret)
			waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionFalse, conditions.ReasonInvalidSecret)
			var sts appsv1.StatefulSet
			if getObject(t, client.ObjectKeyFromObject(mb), &sts) {
				t.Error("a StatefulSet was applied with credentials the bridge refuses")
			}
			expectOneEvent(t, ns, tc.name, corev1.EventTypeWarning, conditions.ReasonInvalidSecret)
			setSecretKey(t, ns, tc.name+"-keys", tc.key, tc.fixed)
			waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
		})
	}
}

func setSecretKey(t *testing.T, ns, name, key, value string) {
	t.Helper()
	var s corev1.Secret
	if !getObject(t, client.ObjectKey{Namespace: ns, Name: name}, &s) {
		t.Fatalf("Secret %s not found", name)
	}
	patch := client.MergeFrom(s.DeepCopy())
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data[key] = []byte(value)
	if err := k8sClient.Patch(context.Background(), &s, patch); err != nil {
		t.Fatal(err)
	}
}

// staleServiceCache answers every Service read as the informer cache does
// before it saw a Service created a moment ago: not found.
type staleServiceCache struct{ client.Client }

func (c staleServiceCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Service); ok {
		return apierrors.NewNotFound(corev1.Resource("services"), key.Name)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// Issue 32.5: the guard against taking over a user's Service reads live
// when the cache has not seen it, instead of applying over it.
func TestServiceConflictReadLive(t *testing.T) {
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{wrap: func(c client.Client) client.Client { return staleServiceCache{c} }})
	user := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
	create(t, user)
	mb := newBridge(ns, "web")
	create(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionStalled, metav1.ConditionTrue, conditions.ReasonServiceConflict)
	var live corev1.Service
	getObject(t, client.ObjectKeyFromObject(user), &live)
	if len(live.OwnerReferences) != 0 || len(live.ManagedFields) != 1 {
		t.Errorf("the user's Service was applied over: owners %v, %d managers", live.OwnerReferences, len(live.ManagedFields))
	}
}
