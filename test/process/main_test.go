// Package process holds the tests that run the bridge as its users do: the
// binary as a child process (against the WhatsApp simulator, with headless
// Chromium for the dashboard), and the parts that need the simulator in
// this process. Under -short every test here skips and nothing is built.
package process

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/internal/testutil"
)

// The bridge built once, as real binaries, for the process tests: the
// production build and the build wired to the simulator (-tags wasim).
var bridgeBin, simBridgeBin string

// bridgePackage is the command the binaries are built from.
const bridgePackage = "github.com/msgbridge/msgbridge/bridge/cmd/bridge"

// The bridge's exit statuses (README: an invalid setting stops start-up,
// exit status 2), as its users see them.
const (
	exitRunFailed  = 1
	exitBadSetting = 2
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "bridge-bin")
	if err != nil {
		panic(err)
	}
	bridgeBin, simBridgeBin = filepath.Join(dir, "bridge"), filepath.Join(dir, "bridge-wasim")
	for bin, tags := range map[string]string{bridgeBin: "", simBridgeBin: "wasim"} {
		build := exec.Command("go", append(append([]string{"build", "-tags", tags}, buildFlags()...), "-o", bin, bridgePackage)...)
		// Static, as the image builds it (Dockerfile): the start-up figures
		// are those of the shipped binary, without the C loader's work.
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building the bridge:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// envReleaseBuild set to 1 builds the bridge as the image does (stripped,
// -trimpath) rather than with its symbols: hack/perf-baseline.sh RELEASE=1
// measures the shipped binaries side by side.
const envReleaseBuild = "BRIDGE_RELEASE_BUILD"

// buildFlags are go build's flags for the bridge under test.
func buildFlags() []string {
	const version = "-X github.com/msgbridge/msgbridge/contract.Version=9.9.9-test"
	if os.Getenv(envReleaseBuild) == "1" {
		return []string{"-trimpath", "-ldflags", "-s -w " + version}
	}
	return []string{"-ldflags", version}
}

func validEnv(dataDir string) []string {
	return []string{
		"LISTEN_ADDR=127.0.0.1:0",
		"DATA_DIR=" + dataDir,
		"API_KEY=api-key-0123456789abcdef",
		"ADMIN_TOKEN=admin-token-0123456789abcdef",
		"ENCRYPTION_KEY=" + testutil.TestKeyHex,
		// The tests' receivers listen on loopback.
		"WEBHOOK_LOCAL_TARGETS=on",
	}
}

func TestInvalidSettingStopsWithOneLineAndTouchesNothing(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	cases := map[string]struct {
		env  []string
		want string
	}{
		"missing API_KEY": {
			env:  []string{"DATA_DIR=" + dataDir, "ADMIN_TOKEN=admin-token-0123456789abcdef", "ENCRYPTION_KEY=" + testutil.TestKeyHex},
			want: "bridge: setting API_KEY (--api-key, from default): is required\n",
		},
		"bad MAX_FILE_SIZE": {
			env:  append(validEnv(dataDir), "MAX_FILE_SIZE=huge"),
			want: "bridge: setting MAX_FILE_SIZE (--max-file-size, from environment): \"huge\" is not a size (for example 50MB, 10MiB or 1048576)\n",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			skipProcessTest(t)
			cmd := exec.Command(bridgeBin)
			cmd.Env = c.env
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitBadSetting {
				t.Fatalf("exit: %v, want status %d", err, exitBadSetting)
			}
			if stderr.String() != c.want {
				t.Errorf("stderr %q, want %q", stderr.String(), c.want)
			}
			if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
				t.Errorf("data dir was touched: %v", err)
			}
		})
	}
}

func TestServesHealthAndStopsOnSIGTERM(t *testing.T) {
	p := startBridge(t, bridgeBin, validEnv(t.TempDir()))
	var health struct {
		Status, WhatsApp, Version, Timestamp string
		Uptime                               float64
	}
	if code, body := request(t, http.MethodGet, "http://"+p.addr+"/health", "", "", "", &health); code != http.StatusOK {
		t.Fatalf("health: %d %s", code, body)
	}
	if health.Status != "online" || health.WhatsApp != "unpaired" || health.Version != "9.9.9-test" || health.Uptime < 0 {
		t.Errorf("health %+v", health)
	}
	if code, body := request(t, http.MethodHead, "http://"+p.addr+"/health", "", "", "", nil); code != http.StatusOK || body != "" {
		t.Errorf("HEAD /health: %d %q", code, body)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", health.Timestamp); err != nil {
		t.Errorf("timestamp %q: %v", health.Timestamp, err)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(10 * time.Second); err != nil {
		t.Errorf("exit after SIGTERM: %v (stderr %s)", err, p.stderr.String())
	}
}

// skipProcessTest skips tb under -short: it runs a bridge binary, which
// TestMain builds only without -short.
func skipProcessTest(tb testing.TB) {
	tb.Helper()
	testutil.SkipIfShort(tb, "runs a bridge process")
}
