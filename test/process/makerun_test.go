package process

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// make run (hack/run-bridge.sh) says that it compiles before it does, and
// its banner shows the version /health reports, also for a VERSION that
// is not semantic (git describe's, which the bridge turns into one).
func TestMakeRunBanner(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs the bridge")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	cmd := exec.Command("bash", clientsDir+"/run-bridge.sh")
	cmd.Env = append(os.Environ(), "DATA_DIR="+t.TempDir(), "LISTEN_ADDR="+addr, "VERSION=dd9d725-dirty")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
	})
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		for s := bufio.NewScanner(out); s.Scan(); {
			lines <- s.Text()
		}
	}()
	var said []string
	banner, timeout := "", time.After(5*time.Minute)
	for banner == "" {
		select {
		case line, open := <-lines:
			if !open {
				t.Fatalf("make run ended, having said %q", said)
			}
			said = append(said, line)
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "msgbridge bridge "); ok {
				banner = v
			}
		case <-timeout:
			t.Fatalf("no banner after 5 minutes; said %q", said)
		}
	}
	if !slices.ContainsFunc(said, func(l string) bool { return strings.HasPrefix(l, "Compiling the bridge") }) {
		t.Errorf("make run said %q before its banner, not what it compiles", said)
	}
	var health struct{ Version string }
	if code, raw := request(t, http.MethodGet, "http://"+addr+"/health", "", "", "", &health); code != http.StatusOK ||
		banner != health.Version {
		t.Errorf("the banner says %q, /health %d %s; make run said %q", banner, code, raw, said)
	}
}
