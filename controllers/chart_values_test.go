package controllers

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Issue 18.7: every value of values.yaml is described by
// values.schema.json, down to its leaves, except free-form Kubernetes
// objects (resources, affinity, …), which the schema declares as objects.
func TestValuesSchemaDescribesEveryValue(t *testing.T) {
	var values map[string]any
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	data, err = os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatalf("the chart has no values schema: %v", err)
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	checkSchemaCovers(t, "", values, schema)
}

func checkSchemaCovers(t *testing.T, path string, values map[string]any, schema map[string]any) {
	t.Helper()
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		return // a free-form object
	}
	if schema["additionalProperties"] != false {
		t.Errorf("%s: the schema lets unknown keys through (additionalProperties is not false)", path)
	}
	for k, v := range values {
		sub, ok := props[k].(map[string]any)
		if !ok {
			t.Errorf("value %s%s has no schema", path, k)
			continue
		}
		if m, ok := v.(map[string]any); ok {
			checkSchemaCovers(t, path+k+".", m, sub)
		}
	}
}

// Issue 18.7: values the operator would exit on are refused at render time.
func TestChartRefusesInvalidValues(t *testing.T) {
	helm := helmBinary(t)
	for _, set := range []string{
		"logLevel=warn", "pollInterval=soon", "replicas=-1", "metrics.port=0",
		"image.pullPolicy=Sometimes", "extraArgs[0]=verbose", "typo=1", "metrics.serviceMonitor.typo=1",
	} {
		out, err := exec.Command(helm, "template", "msgbridge", chartDir, "--set", set).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "schema") {
			t.Errorf("--set %s rendered (%v):\n%.300s", set, err, out)
		}
	}
}

// kubeconfigFor writes a kubeconfig for the suite's API server, for helm.
func kubeconfigFor(t *testing.T) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: restConfig.Host, CertificateAuthorityData: restConfig.CAData}
	cfg.AuthInfos["envtest"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: restConfig.CertData, ClientKeyData: restConfig.KeyData, Token: restConfig.BearerToken,
	}
	cfg.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "envtest"}
	cfg.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Issue 18.7: the CRD applied with kubectl first (as the suite did) makes a
// plain helm install fail; both ways the README gives work: the release
// without the CRD (crds.enabled=false), and adopting the CRD with Helm's
// ownership labels and annotations.
func TestHelmInstallOverKubectlCRD(t *testing.T) {
	helm := helmBinary(t)
	kubeconfig := kubeconfigFor(t)
	install := func(release string, set ...string) (string, error) {
		ns := testNamespace(t)
		args := []string{"install", release, chartDir, "--kubeconfig", kubeconfig, "--namespace", ns,
			"--set", "rbac.create=false,metrics.service.enabled=false"}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		out, err := exec.Command(helm, args...).CombinedOutput()
		return string(out), err
	}
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}

	if out, err := install("plain"); err == nil || !strings.Contains(out, "exists and cannot be imported") {
		t.Fatalf("helm install over a kubectl-applied CRD: %v\n%s", err, out)
	}
	if !strings.Contains(string(readme), "--set crds.enabled=false") {
		t.Error("the chart README does not say how to install without the CRD")
	}
	if out, err := install("nocrd", "crds.enabled=false"); err != nil {
		t.Fatalf("helm install --set crds.enabled=false: %v\n%s", err, out)
	}

	// The adoption the README gives.
	for _, want := range []string{"app.kubernetes.io/managed-by=Helm", "meta.helm.sh/release-name=", "meta.helm.sh/release-namespace="} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("the chart README's adoption steps lack %s", want)
		}
	}
	ns := testNamespace(t)
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Name: "messagingbridges.msgbridge.io"}, crd); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(crd.DeepCopy())
	crd.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "Helm"})
	crd.SetAnnotations(map[string]string{"meta.helm.sh/release-name": "adopted", "meta.helm.sh/release-namespace": ns})
	if err := k8sClient.Patch(context.Background(), crd, patch); err != nil {
		t.Fatal(err)
	}
	args := []string{"install", "adopted", chartDir, "--kubeconfig", kubeconfig, "--namespace", ns,
		"--set", "rbac.create=false,metrics.service.enabled=false"}
	if out, err := exec.Command(helm, args...).CombinedOutput(); err != nil {
		t.Fatalf("helm install after adopting the CRD: %v\n%s", err, out)
	}
}
