package controllers

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/conditions"
)

// Issue 32.5: a namespaced install grants the operator's rules as a Role in
// each watched namespace and no ClusterRole, and the operator, acting as its
// ServiceAccount with only those Roles, reconciles a bridge there while it
// cannot read a Secret of any other namespace.
func TestNamespacedInstall(t *testing.T) {
	needsEnvtest(t)
	release, watched, other := testNamespace(t), testNamespace(t), testNamespace(t)
	objs := renderChart(t, release, "watchNamespaces={"+watched+"}")
	if n := len(ofKind(objs, "ClusterRole")) + len(ofKind(objs, "ClusterRoleBinding")); n != 0 {
		t.Fatalf("%d cluster-wide RBAC objects rendered for a namespaced install", n)
	}
	var managerRole *unstructured.Unstructured
	for _, r := range ofKind(objs, "Role") {
		if r.GetNamespace() == watched {
			managerRole = r
		}
	}
	if managerRole == nil {
		t.Fatalf("no Role in the watched namespace %s", watched)
	}
	if got, want := managerRole.Object["rules"], readManifest(t, filepath.Join(configDir, "rbac", "role.yaml"))["rules"]; !reflect.DeepEqual(got, want) {
		t.Errorf("the Role's rules differ from config/rbac/role.yaml")
	}
	if args := operatorArgs(t, objs); !slices.Contains(args, "--watch-namespaces="+watched) {
		t.Errorf("operator args %v lack --watch-namespaces=%s", args, watched)
	}
	for _, obj := range objs {
		if k := obj.GetKind(); k == "Role" || k == "RoleBinding" || k == "ServiceAccount" {
			if err := k8sClient.Create(context.Background(), obj); err != nil {
				t.Fatalf("creating %s %s/%s: %v", k, obj.GetNamespace(), obj.GetName(), err)
			}
		}
	}

	asOperator := rest.CopyConfig(restConfig)
	asOperator.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:msgbridge", release)}
	c, err := client.New(asOperator, client.Options{Scheme: testScheme})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		err := c.List(context.Background(), &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "SecretList"}}, client.InNamespace(watched))
		return err == nil, fmt.Sprintf("the Role does not let the operator list Secrets in %s yet: %v", watched, err)
	})
	secrets := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "SecretList"}}
	if err := c.List(context.Background(), secrets, client.InNamespace(other)); err == nil {
		t.Errorf("the operator may list Secrets in %s, which it does not watch", other)
	}

	startOperator(t, watched, operatorOptions{config: asOperator})
	mb := newBridgeWithKeys(t, watched, "sales")
	mb.Spec.DisruptionBudget = &msgbridgev1alpha1.DisruptionBudgetSpec{Enabled: true}
	create(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	markPodReady(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionAvailable, metav1.ConditionTrue, conditions.ReasonPodReady)
	// The Role's rules suffice for the PodDisruptionBudget too, its delete
	// included.
	waitDisruptionBudget(t, c, mb, true)
	patchBridge(t, mb, func(mb *msgbridgev1alpha1.MessagingBridge) { mb.Spec.DisruptionBudget.Enabled = false })
	waitDisruptionBudget(t, c, mb, false)
}

func operatorArgs(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(ofKind(objs, "Deployment")[0].Object, "spec", "template", "spec", "containers")
	raw, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	return raw
}
