package e2e

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The cluster's fixed addresses (hack/e2e-cluster.sh): this machine is
// gateway on the pods' bridge, so pods reach a listener here directly.
const (
	gatewayIP = "10.222.0.1"
	// simulatorAddr is where the simulator listens for the bridge pods.
	simulatorAddr = gatewayIP + ":7781"
)

var repoRoot = filepath.Join("..", "..")

// cluster is a running hack/e2e-cluster.sh cluster.
type cluster struct {
	dir        string
	kubeconfig string
	bin        string
	client     client.Client
}

// needCluster skips the test unless it can bring a cluster up: not under
// -short, and only as root. CI runs as root, so there a missing root or
// helm fails instead of skipping.
func needCluster(t *testing.T) {
	t.Helper()
	testutil.SkipIfShort(t, "brings up a Kubernetes cluster")
	ci := os.Getenv("CI") != ""
	if os.Geteuid() != 0 {
		if ci {
			t.Fatal("the end-to-end cluster needs root, and CI runs as root")
		}
		t.Skip("the end-to-end cluster needs root (make e2e as root)")
	}
	if os.Getenv("HELM") == "" {
		if ci {
			t.Fatal("HELM is not set; run make test")
		}
		t.Skip("HELM is not set; make e2e sets it")
	}
}

// startClusterWithSimulator brings the cluster up with images that trust a
// fresh simulator root key, and starts the simulator with that key on
// simulatorAddr: the pods dial it on this machine's address on their bridge.
func startClusterWithSimulator(t *testing.T) (*cluster, *wasim.Simulator) {
	t.Helper()
	privateKey := make([]byte, 32)
	if _, err := rand.Read(privateKey); err != nil {
		t.Fatal(err)
	}
	rootKey, err := wasim.RootKeyFromHex(hex.EncodeToString(privateKey))
	if err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, hex.EncodeToString(rootKey.Pub[:]))
	return c, wasim.Start(t, wasim.Options{Addr: simulatorAddr, RootKey: rootKey})
}

// startCluster builds the images (the wasim bridge dials simulatorAddr with
// rootKey) and brings the cluster up. The script stays in the foreground
// and tears the cluster down when its stdin closes: at cleanup, and also
// when this test process dies without cleanup (a timeout's panic), because
// the kernel closes the pipe then.
func startCluster(t *testing.T, rootKey string) *cluster {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(repoRoot, ".e2e"))
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{dir: dir, kubeconfig: filepath.Join(dir, "pki", "admin.kubeconfig")}
	begin := time.Now()
	c.bin = strings.TrimSpace(string(runScript(t, nil, "e2e-binaries.sh")))
	report(t, "cluster binaries ready (cached after the first build)", time.Since(begin))

	begin = time.Now()
	runScript(t, []string{"WASIM_ADDR=" + simulatorAddr, "WASIM_ROOT_KEY=" + rootKey},
		"e2e-images.sh", filepath.Join(dir, "images"), c.bin)
	report(t, "images built", time.Since(begin))

	begin = time.Now()
	c.up(t)
	report(t, "cluster started", time.Since(begin))
	c.client = newClient(t, c.kubeconfig)
	return c
}

// up runs `e2e-cluster.sh up --hold` until it says ready.
func (c *cluster) up(t *testing.T) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "e2e-cluster.sh"), "up", "--hold")
	cmd.Env = append(os.Environ(), "E2E_DIR="+c.dir, "E2E_BIN="+c.bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var log testutil.LockedBuffer
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	ready := make(chan bool, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if lines.Text() == "e2e-cluster: ready" {
				ready <- true
			}
		}
		done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		begin := time.Now()
		_ = stdin.Close()
		select {
		case err := <-done:
			report(t, "cluster torn down", time.Since(begin))
			if err != nil {
				t.Errorf("tearing the cluster down: %v\n%s", err, tail(log.String()))
			}
		case <-time.After(3 * time.Minute):
			t.Errorf("the cluster was not torn down after 3 minutes\n%s", tail(log.String()))
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("the cluster did not start: %v\n%s", err, tail(log.String()))
	case <-time.After(5 * time.Minute):
		t.Fatalf("the cluster did not start in 5 minutes\n%s", tail(log.String()))
	}
	t.Logf("cluster start-up:\n%s", log.String())
}

// kubectl runs the cluster's kubectl, for diagnostics.
func (c *cluster) kubectl(args ...string) string {
	cmd := exec.Command(filepath.Join(c.bin, "kubectl"), append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out) + err.Error()
	}
	return string(out)
}

// helm runs HELM against the cluster, with its caches in a temp dir.
func (c *cluster) helm(t *testing.T, args ...string) string {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(os.Getenv("HELM"), append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runScript runs hack/NAME with args and extra environment, and returns
// its standard output; its standard error goes to the test log.
func runScript(t *testing.T, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot, "hack", name), args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/%s: %v\n%s", name, err, tail(stderr.String()))
	}
	return out
}

func newClient(t *testing.T, kubeconfig string) client.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, msgbridgev1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	ctrllog.SetLogger(logr.Discard()) // the client's own logs say nothing the test does not
	k, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// report logs one of the figures the README quotes.
func report(t *testing.T, what string, d time.Duration) {
	t.Helper()
	t.Logf("FIGURE %s: %.1fs", what, d.Seconds())
}

// tail keeps the end of a long log.
func tail(s string) string {
	const keep = 8000
	if len(s) > keep {
		return "…" + s[len(s)-keep:]
	}
	return s
}
