package controllers

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/bridge/wasim"
	"github.com/msgbridge/msgbridge/bridge/wasim/wasimtest"
)

// End to end: the operator on a real API server renders a bridge; the bridge
// binary (built with -tags wasim) runs as a process with exactly the
// environment the operator rendered, resolved from the Secrets it wrote, the
// way the kubelet would. A simulated phone links it, the status says
// connected; after kill -9 the status leaves connected within three
// heartbeat intervals plus one poll. Only the kubelet is played by the test:
// it starts the process and marks the pod ready.
func TestEndToEndWithBridgeProcess(t *testing.T) {
	needsEnvtest(t)
	const (
		heartbeat = time.Second
		poll      = time.Second
		account   = "4915100000001"
	)
	sim := wasim.Start(t)
	bin := buildBridge(t)
	addr := freeAddr(t)
	ns := testNamespace(t)
	startOperator(t, ns, operatorOptions{pollInterval: poll, bridges: map[string]string{"sales": "http://" + addr}})

	mb := &msgbridgev1alpha1.MessagingBridge{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sales"},
		Spec:       msgbridgev1alpha1.MessagingBridgeSpec{HeartbeatInterval: &metav1.Duration{Duration: heartbeat}},
	}
	if err := k8sClient.Create(context.Background(), mb); err != nil {
		t.Fatal(err)
	}
	sts := waitStatefulSet(t, mb, anyStatefulSet)
	env := podEnv(t, ns, sts.Spec.Template.Spec.Containers[0].Env)
	// What differs from a pod: the volume is a temp dir, the port is free on
	// this machine, and WhatsApp is the simulator.
	env["DATA_DIR"] = t.TempDir()
	env["LISTEN_ADDR"] = addr
	env["WASIM_ADDR"] = sim.Addr()
	env["WASIM_ROOT_KEY"] = sim.RootPublicKeyHex()
	bridge := startProcess(t, bin, env)
	markPodReady(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionFalse, "PairingRequired")

	wasimtest.LinkBridge(t, sim.Phone(account), "http://"+addr, env["ADMIN_TOKEN"])
	linked := waitCondition(t, mb, msgbridgev1alpha1.ConditionSessionConnected, metav1.ConditionTrue, "Connected")
	if s := linked.Status.Session; s == nil || s.State != msgbridgev1alpha1.SessionConnected || s.Account != account {
		t.Errorf("status.session %+v", s)
	}
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReady, metav1.ConditionTrue, "Ready")

	killed := time.Now()
	_ = bridge.Process.Kill()
	_, _ = bridge.Process.Wait()
	eventually(t, 30*time.Second, func() (bool, string) {
		var got msgbridgev1alpha1.MessagingBridge
		getObject(t, client.ObjectKeyFromObject(mb), &got)
		for _, c := range got.Status.Conditions {
			if c.Type == msgbridgev1alpha1.ConditionSessionConnected {
				return c.Status != metav1.ConditionTrue, string(c.Status) + "/" + c.Reason
			}
		}
		return false, "no SessionConnected condition"
	})
	// The jitter adds up to a tenth of the poll; a second more for the
	// envtest API server's writes on a loaded 2-core machine.
	left := time.Since(killed)
	t.Logf("status left connected %v after kill -9", left)
	if limit := 3*heartbeat + poll + poll/10 + time.Second; left > limit {
		t.Errorf("status left connected %v after the kill, more than %v", left, limit)
	}
}

// buildBridge builds the bridge with the simulator wired in.
func buildBridge(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bridge")
	cmd := exec.Command("go", "build", "-tags", "wasim", "-o", bin, "../bridge/cmd/bridge")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// podEnv resolves the container's env as the kubelet does: literal values,
// and secretKeyRef values read from the Secrets.
func podEnv(t *testing.T, ns string, vars []corev1.EnvVar) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, v := range vars {
		if v.ValueFrom == nil {
			env[v.Name] = v.Value
			continue
		}
		ref := v.ValueFrom.SecretKeyRef
		var s corev1.Secret
		if !getObject(t, client.ObjectKey{Namespace: ns, Name: ref.Name}, &s) {
			t.Fatalf("secret %s for %s not found", ref.Name, v.Name)
		}
		val, ok := s.Data[ref.Key]
		if !ok {
			if ref.Optional != nil && *ref.Optional {
				continue
			}
			t.Fatalf("secret %s has no key %s for %s", ref.Name, ref.Key, v.Name)
		}
		env[v.Name] = string(val)
	}
	return env
}

// startProcess runs bin with exactly env and waits until it serves /health.
func startProcess(t *testing.T, bin string, env map[string]string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		var line struct{ Msg string }
		if json.Unmarshal(lines.Bytes(), &line) == nil && line.Msg == "bridge listening" {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return cmd
		}
	}
	t.Fatal("the bridge exited before listening")
	return nil
}
