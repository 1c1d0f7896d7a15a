package controllers

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The suite shares one real kube-apiserver and etcd: starting them costs
// about 3 s, and every test works in a namespace of its own.
var (
	testScheme *runtime.Scheme
	restConfig *rest.Config
	k8sClient  client.Client
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() { // the tests that need the API server skip
		os.Exit(m.Run())
	}
	os.Exit(runSuite(m))
}

// needsEnvtest skips tb under -short, when TestMain starts no API server.
func needsEnvtest(tb testing.TB) {
	tb.Helper()
	testutil.SkipIfShort(tb, "needs envtest (kube-apiserver and etcd)")
}

func runSuite(m *testing.M) int {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	assets, err := envtestAssets()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest binaries:", err)
		return 1
	}
	testScheme = runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(testScheme))
	utilruntime.Must(msgbridgev1alpha1.AddToScheme(testScheme))

	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                testScheme,
	}
	// envtest's default Service range holds 254 addresses; the 1,000-bridge
	// benchmark needs a Service each.
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.96.0.0/16")
	restConfig, err = env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}()
	k8sClient, err = client.New(restConfig, client.Options{Scheme: testScheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 1
	}
	return m.Run()
}

// envtestAssets is KUBEBUILDER_ASSETS when set (make test sets it), else the
// folder hack/envtest-binaries.sh builds or reuses, so that a plain
// `go test ./controllers/` works on a fresh clone too.
func envtestAssets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	out, err := exec.Command(filepath.Join("..", "hack", "envtest-binaries.sh")).Output()
	if err != nil {
		return "", fmt.Errorf("hack/envtest-binaries.sh: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// testNamespace creates a namespace for one test.
func testNamespace(t *testing.T) string {
	t.Helper()
	needsEnvtest(t) // every test that needs a namespace needs the API server
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := k8sClient.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// ctrlConfigForTests lets several tests start managers with the same
// controller in one process; production keeps the uniqueness check.
func ctrlConfigForTests() config.Controller {
	skip := true
	return config.Controller{SkipNameValidation: &skip}
}
