package controllers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The shipped manifests (the Helm chart, config/default, config/samples) are
// checked against the real API server: every object they hold must pass a
// server-side dry-run apply, and the chart must carry exactly the CRD and RBAC
// that controller-gen generates into config/.

var (
	chartDir  = filepath.Join("..", "charts", "msgbridge")
	configDir = filepath.Join("..", "config")
)

const shipFieldOwner = "msgbridge-ship-test"

// helmBinary is the helm that make test installs (HELM). Outside make the
// chart tests skip, except in CI, where a missing helm is an error.
func helmBinary(t *testing.T) string {
	t.Helper()
	testutil.SkipIfShort(t, "runs helm")
	helm := os.Getenv("HELM")
	if helm == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("HELM is not set; run make test")
		}
		t.Skip("HELM is not set; make test sets it")
	}
	return helm
}

func runHelm(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

func TestHelmLint(t *testing.T) {
	runHelm(t, "lint", "--strict", chartDir)
	runHelm(t, "lint", "--strict", chartDir, "--set", "networkPolicy.enabled=true,metrics.serviceMonitor.enabled=true")
}

// Two replicas without leader election would both reconcile every bridge.
func TestChartRefusesReplicasWithoutLeaderElection(t *testing.T) {
	out, err := exec.Command(helmBinary(t), "template", "msgbridge", chartDir,
		"--set", "replicas=2,leaderElection.enabled=false").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "need leaderElection.enabled") {
		t.Errorf("helm template with 2 replicas and no leader election: %v\n%s", err, out)
	}
}

// renderChart is `helm template` of the chart into namespace ns.
func renderChart(t *testing.T, ns string, set ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", "msgbridge", chartDir, "--namespace", ns}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return decodeManifests(t, runHelm(t, args...))
}

// renderKustomization builds a kustomization in-process, as
// `kubectl apply -k` does.
func renderKustomization(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out, err := resources.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return decodeManifests(t, out)
}

func decodeManifests(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj map[string]any
		err := decoder.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("decoding manifests: %v", err)
		}
		if len(obj) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
}

// dryRunApply applies every object server-side with dryRun=All, so that the
// API server validates each one against its schema (and the CRD against the
// CRD rules) without changing anything. Namespaces are created for real: a
// namespaced object cannot be dry-run into a namespace that does not exist.
func dryRunApply(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	for _, obj := range objs {
		if obj.GetKind() == "Namespace" {
			ensureNamespace(t, obj.GetName())
			continue
		}
		if ns := obj.GetNamespace(); ns != "" {
			ensureNamespace(t, ns)
		}
	}
	for _, obj := range objs {
		if obj.GetKind() == "Namespace" {
			continue
		}
		err := k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj.DeepCopy()),
			client.FieldOwner(shipFieldOwner), client.ForceOwnership, client.DryRunAll)
		if err != nil {
			t.Errorf("dry-run apply %s %s/%s: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}
}

func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8sClient.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// installServiceMonitorCRD stands in for the Prometheus Operator's CRD, which
// this machine cannot download: it only lets the API server accept a
// monitoring.coreos.com/v1 ServiceMonitor, so that the dry-run checks the
// object's identity and metadata, not the Prometheus Operator's schema.
func installServiceMonitorCRD(t *testing.T) {
	t.Helper()
	crd := decodeManifests(t, []byte(serviceMonitorStandInCRD))[0]
	if err := k8sClient.Create(context.Background(), crd); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() (bool, string) {
		var list unstructured.UnstructuredList
		list.SetAPIVersion("monitoring.coreos.com/v1")
		list.SetKind("ServiceMonitorList")
		err := k8sClient.List(context.Background(), &list)
		return err == nil, "ServiceMonitor API not served: " + errString(err)
	})
}

const serviceMonitorStandInCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: servicemonitors.monitoring.coreos.com}
spec:
  group: monitoring.coreos.com
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestChartRendersValidObjects(t *testing.T) {
	needsEnvtest(t)
	helmBinary(t)
	installServiceMonitorCRD(t)
	bridgeNamespace := testNamespace(t)
	cases := []struct {
		name string
		set  []string
		// kinds the render must hold, and must not.
		want, absent []string
	}{
		{
			name:   "defaults",
			want:   []string{"CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment", "Service", "PodDisruptionBudget"},
			absent: []string{"ServiceMonitor", "NetworkPolicy"},
		},
		{
			name: "everything on",
			set: []string{
				"metrics.serviceMonitor.enabled=true", "networkPolicy.enabled=true",
				"networkPolicy.bridgeNamespaces={" + bridgeNamespace + "}", "replicas=2",
				"image.repository=registry.example/msgbridge", "image.tag=v1.2.3", "extraArgs={--zap-devel}",
			},
			want: []string{"CustomResourceDefinition", "Deployment", "ServiceMonitor", "NetworkPolicy"},
		},
		{
			name: "bring your own CRD, RBAC and ServiceAccount, one replica without leader election",
			set: []string{
				"crds.enabled=false", "rbac.create=false", "serviceAccount.create=false", "serviceAccount.name=existing",
				"leaderElection.enabled=false", "metrics.service.enabled=false", "replicas=1",
			},
			want:   []string{"Deployment"},
			absent: []string{"CustomResourceDefinition", "ClusterRole", "Role", "ServiceAccount", "Service", "PodDisruptionBudget"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ns := testNamespace(t)
			objs := renderChart(t, ns, c.set...)
			kinds := map[string]int{}
			for _, obj := range objs {
				kinds[obj.GetKind()]++
			}
			for _, k := range c.want {
				if kinds[k] == 0 {
					t.Errorf("no %s rendered; got %v", k, kinds)
				}
			}
			for _, k := range c.absent {
				if kinds[k] != 0 {
					t.Errorf("%s rendered; got %v", k, kinds)
				}
			}
			checkOperatorDeployment(t, objs)
			if c.name == "defaults" {
				checkHighlyAvailable(t, objs)
			}
			dryRunApply(t, objs)
		})
	}
}

// Issue 44.7: by default the operator runs two replicas with leader election,
// spread over nodes, behind a disruption budget that selects them: a drain
// never takes both, so statuses keep being written.
func checkHighlyAvailable(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	d := ofKind(objs, "Deployment")[0].Object
	if replicas, _, _ := unstructured.NestedFieldNoCopy(d, "spec", "replicas"); fmt.Sprint(replicas) != "2" {
		t.Errorf("%v operator replicas, want 2", replicas)
	}
	containers, _, _ := unstructured.NestedSlice(d, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	if !slices.Contains(args, "--leader-elect") && !slices.Contains(args, "--leader-elect=true") {
		t.Errorf("no leader election: args %v", args)
	}
	podLabels, _, _ := unstructured.NestedStringMap(d, "spec", "template", "metadata", "labels")
	spread, _, _ := unstructured.NestedSlice(d, "spec", "template", "spec", "topologySpreadConstraints")
	var keys []string
	for _, c := range spread {
		c := c.(map[string]any)
		keys = append(keys, c["topologyKey"].(string))
		selector, _, _ := unstructured.NestedStringMap(c, "labelSelector", "matchLabels")
		if len(selector) == 0 || !selects(selector, podLabels) {
			t.Errorf("spread over %s selects %v, not the operator's pods %v", c["topologyKey"], selector, podLabels)
		}
	}
	if !slices.Contains(keys, "kubernetes.io/hostname") {
		t.Errorf("replicas not spread over nodes: %v", keys)
	}
	budgets := ofKind(objs, "PodDisruptionBudget")
	if len(budgets) != 1 {
		t.Fatalf("%d PodDisruptionBudgets, want 1", len(budgets))
	}
	selector, _, _ := unstructured.NestedStringMap(budgets[0].Object, "spec", "selector", "matchLabels")
	if len(selector) == 0 || !selects(selector, podLabels) {
		t.Errorf("the PodDisruptionBudget selects %v, not the operator's pods %v", selector, podLabels)
	}
	if budgets[0].GetNamespace() != ofKind(objs, "Deployment")[0].GetNamespace() {
		t.Errorf("the PodDisruptionBudget is in %q, the operator in %q", budgets[0].GetNamespace(), ofKind(objs, "Deployment")[0].GetNamespace())
	}
}

func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// checkOperatorDeployment: the manager's BRIDGE_IMAGE is its own image, and
// the pod meets the restricted Pod Security profile.
func checkOperatorDeployment(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	deployments := ofKind(objs, "Deployment")
	if len(deployments) != 1 {
		t.Fatalf("%d Deployments", len(deployments))
	}
	d := deployments[0].Object
	containers, _, _ := unstructured.NestedSlice(d, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%d containers", len(containers))
	}
	manager := containers[0].(map[string]any)
	env, _, _ := unstructured.NestedSlice(manager, "env")
	bridgeImage := ""
	for _, e := range env {
		if e := e.(map[string]any); e["name"] == "BRIDGE_IMAGE" {
			bridgeImage, _ = e["value"].(string)
		}
	}
	if bridgeImage == "" || bridgeImage != manager["image"] {
		t.Errorf("BRIDGE_IMAGE %q, manager image %q: bridges must run the manager's image", bridgeImage, manager["image"])
	}
	restricted := map[string]any{
		"spec.template.spec.securityContext.runAsNonRoot":        true,
		"spec.template.spec.securityContext.seccompProfile.type": "RuntimeDefault",
		"container.securityContext.allowPrivilegeEscalation":     false,
		"container.securityContext.readOnlyRootFilesystem":       true,
		"container.securityContext.capabilities.drop":            []any{"ALL"},
		"container.livenessProbe.httpGet.path":                   "/healthz",
		"container.readinessProbe.httpGet.path":                  "/readyz",
	}
	for path, want := range restricted {
		root, fields := d, strings.Split(path, ".")
		if fields[0] == "container" {
			root, fields = manager, fields[1:]
		}
		got, _, _ := unstructured.NestedFieldNoCopy(root, fields...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
}

func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() == kind {
			out = append(out, obj)
		}
	}
	return out
}

func readManifest(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}

// The chart's copies under files/ must be byte for byte what config/ holds;
// `make manifests` (hack/sync-chart.sh) refreshes them.
func TestChartFilesMatchConfig(t *testing.T) {
	pairs := map[string]string{
		filepath.Join(configDir, "rbac", "role.yaml"):                 filepath.Join(chartDir, "files", "rbac", "role.yaml"),
		filepath.Join(configDir, "rbac", "leader_election_role.yaml"): filepath.Join(chartDir, "files", "rbac", "leader_election_role.yaml"),
	}
	crds, err := filepath.Glob(filepath.Join(configDir, "crd", "bases", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	for _, crd := range crds {
		pairs[crd] = filepath.Join(chartDir, "files", "crds", filepath.Base(crd))
	}
	copies, _ := filepath.Glob(filepath.Join(chartDir, "files", "crds", "*.yaml"))
	if len(copies) != len(crds) {
		t.Errorf("the chart holds %d CRD files, config/crd/bases %d; run make manifests", len(copies), len(crds))
	}
	for source, chartCopy := range pairs {
		want, err := os.ReadFile(source)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(chartCopy)
		if err != nil {
			t.Errorf("%v; run make manifests", err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s; run make manifests", chartCopy, source)
		}
	}
}

// What the chart renders, not only the files it reads, matches config/: the
// CRD (apart from the chart's labels and keep annotation) and the rules of
// the ClusterRole and the leader-election Role.
func TestChartRendersConfigCRDAndRBAC(t *testing.T) {
	objs := renderChart(t, "msgbridge-system")

	crds := ofKind(objs, "CustomResourceDefinition")
	if len(crds) != 1 {
		t.Fatalf("%d CRDs rendered", len(crds))
	}
	rendered := crds[0]
	if got := rendered.GetAnnotations()["helm.sh/resource-policy"]; got != "keep" {
		t.Errorf("CRD annotation helm.sh/resource-policy %q, want keep", got)
	}
	want := readManifest(t, filepath.Join(configDir, "crd", "bases", "msgbridge.io_messagingbridges.yaml"))
	if !reflect.DeepEqual(rendered.Object["spec"], want["spec"]) {
		t.Error("the chart's CRD spec differs from config/crd/bases")
	}
	wantMeta := want["metadata"].(map[string]any)
	if rendered.GetName() != wantMeta["name"] {
		t.Errorf("CRD name %q", rendered.GetName())
	}
	for k, v := range wantMeta["annotations"].(map[string]any) {
		if rendered.GetAnnotations()[k] != v {
			t.Errorf("CRD annotation %s=%q, want %q", k, rendered.GetAnnotations()[k], v)
		}
	}

	for kind, source := range map[string]string{
		"ClusterRole": filepath.Join(configDir, "rbac", "role.yaml"),
		"Role":        filepath.Join(configDir, "rbac", "leader_election_role.yaml"),
	} {
		roles := ofKind(objs, kind)
		if len(roles) != 1 {
			t.Errorf("%d %ss rendered", len(roles), kind)
			continue
		}
		if got, want := roles[0].Object["rules"], readManifest(t, source)["rules"]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s rules differ from %s:\n got %v\nwant %v", kind, source, got, want)
		}
	}
}

// kubectl apply -k config/default deploys a complete operator: valid objects,
// the leader-election Role it needs, bindings to its ServiceAccount in its
// namespace, and BRIDGE_IMAGE equal to its image.
func TestConfigDefaultRendersValidObjects(t *testing.T) {
	needsEnvtest(t)
	objs := renderKustomization(t, filepath.Join(configDir, "default"))
	const ns, serviceAccount = "msgbridge-system", "msgbridge-controller-manager"
	kinds := map[string]int{}
	for _, obj := range objs {
		kinds[obj.GetKind()]++
		if obj.GetKind() == "Namespace" && obj.GetName() != ns {
			t.Errorf("Namespace %q, want %q", obj.GetName(), ns)
		}
	}
	for _, k := range []string{"Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment", "PodDisruptionBudget"} {
		if kinds[k] != 1 {
			t.Errorf("%d %s objects, want 1", kinds[k], k)
		}
	}
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		for _, b := range ofKind(objs, kind) {
			subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
			if len(subjects) != 1 {
				t.Fatalf("%s %s: %d subjects", kind, b.GetName(), len(subjects))
			}
			s := subjects[0].(map[string]any)
			if s["namespace"] != ns || s["name"] != serviceAccount {
				t.Errorf("%s %s binds %v/%v, want %s/%s", kind, b.GetName(), s["namespace"], s["name"], ns, serviceAccount)
			}
		}
	}
	checkOperatorDeployment(t, objs)
	checkHighlyAvailable(t, objs)
	dryRunApply(t, objs)
}

// config/samples works as is: the operator reconciles it into its workload
// without any other object prepared.
func TestConfigSampleIsReconciled(t *testing.T) {
	needsEnvtest(t)
	ns := testNamespace(t)
	samples := renderKustomization(t, filepath.Join(configDir, "samples"))
	if len(samples) == 0 {
		t.Fatal("config/samples is empty")
	}
	startOperator(t, ns, operatorOptions{})
	for _, sample := range samples {
		sample.SetNamespace(ns)
		if err := k8sClient.Create(context.Background(), sample); err != nil {
			t.Fatalf("creating sample %s: %v", sample.GetName(), err)
		}
		mb := &msgbridgev1alpha1.MessagingBridge{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sample.GetName()}}
		waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	}
}
