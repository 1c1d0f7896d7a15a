package process

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/internal/apitest"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// bridgeProcess is a bridge binary running as a child process.
type bridgeProcess struct {
	cmd    *exec.Cmd
	addr   string // host:port it listens on
	stderr *testutil.LockedBuffer
	done   chan error
}

// startBridge runs bin with env and waits for its "bridge listening" line;
// the process is killed at cleanup if still running. Under -short it skips
// t: TestMain builds no binaries then.
func startBridge(t testing.TB, bin string, env []string) *bridgeProcess {
	t.Helper()
	skipProcessTest(t)
	stderr := &testutil.LockedBuffer{}
	p := &bridgeProcess{cmd: newCmd(bin, env, stderr), stderr: stderr, done: make(chan error, 1)}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { p.kill() })

	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		var line struct{ Msg, Addr string }
		if json.Unmarshal(lines.Bytes(), &line) == nil && line.Msg == "bridge listening" {
			p.addr = line.Addr
			break
		}
	}
	if p.addr == "" {
		t.Fatalf("the bridge never listened; stderr: %s", p.stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }() // never block its logging
	return p
}

// kill sends SIGKILL, the crash case, and waits for the process to end.
func (p *bridgeProcess) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.wait(10 * time.Second) // "signal: killed" is the expected outcome
}

func (p *bridgeProcess) wait(limit time.Duration) error {
	select {
	case err := <-p.done:
		p.done <- err // later waits see it too
		return err
	case <-time.After(limit):
		return errTimeout
	}
}

var errTimeout = os.ErrDeadlineExceeded

// request sends method url with the admin token (when not empty) and decodes
// the JSON answer into out; it returns the status code and the raw body.
func request(t testing.TB, method, url, adminToken, contentType, body string, out any) (int, string) {
	t.Helper()
	return requestAs(t, false, method, url, adminToken, contentType, body, out)
}

// requestOffDocument is request for a path or method the API description
// does not have, on purpose: the answer must still be its 404 or 405.
func requestOffDocument(t testing.TB, method, url, adminToken string, out any) (int, string) {
	t.Helper()
	return requestAs(t, true, method, url, adminToken, "", "", out)
}

func requestAs(t testing.TB, offDocument bool, method, url, adminToken, contentType, body string, out any) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if adminToken != "" {
		req.Header.Set("X-Admin-Token", adminToken)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if offDocument {
		req = apitest.OffDocument(req)
	}
	resp, err := apitest.Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %q is not JSON: %v", method, url, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode, string(raw)
}

func newCmd(bin string, env []string, stderr io.Writer) *exec.Cmd {
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.Stderr = stderr
	return cmd
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }
