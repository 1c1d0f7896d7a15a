package datadir

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestOpenCreatesPrivateLayout(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, dir := range []string{d.Root(), d.CredentialsDir(), d.AuditDir(), d.LogsDir(), d.SpoolDir(), d.MediaDir()} {
		info, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o700 {
			t.Errorf("%s has mode %o, want 700", dir, perm)
		}
	}
	if d.SessionDB() != filepath.Join(d.Root(), "credentials", "session.db") || d.BridgeDB() != filepath.Join(d.Root(), "bridge.db") {
		t.Errorf("paths: %s %s", d.SessionDB(), d.BridgeDB())
	}
}

// Folders an older version (or a hand) made wider are tightened to 0700:
// MkdirAll leaves an existing folder's mode as it is.
func TestOpenTightensExistingFolders(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	for _, sub := range []string{"credentials", "audit", "logs", "spool", "media"} {
		if err := os.MkdirAll(filepath.Join(root, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, dir := range []string{d.Root(), d.CredentialsDir(), d.AuditDir(), d.LogsDir(), d.SpoolDir(), d.MediaDir()} {
		if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, %v; want 700", dir, info.Mode().Perm(), err)
		}
	}
}

func TestSecondOpenIsRefusedUntilClose(t *testing.T) {
	root := t.TempDir()
	first, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(root)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
	if !strings.Contains(err.Error(), "held by PID "+strconv.Itoa(os.Getpid())) {
		t.Errorf("error does not name the holder: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(root)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	_ = again.Close()
}

// holderEnv makes the test binary, re-executed, hold the lock until killed.
const holderEnv = "DATADIR_TEST_HOLD"

func TestMain(m *testing.M) {
	if root := os.Getenv(holderEnv); root != "" {
		if _, err := Open(root); err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("locked\n")
		select {} // hold until killed
	}
	os.Exit(m.Run())
}

// Another process holds the lock; kill -9 of that process releases it.
func TestLockHeldByAnotherProcessIsReleasedByKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a process")
	}
	root := t.TempDir()
	holder := exec.Command(os.Args[0])
	holder.Env = append(os.Environ(), holderEnv+"="+root)
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("holder: %q %v", line, err)
	}

	_, err = Open(root)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "PID "+strconv.Itoa(holder.Process.Pid)) {
		t.Fatalf("open while another process holds it: %v", err)
	}

	if err := holder.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = holder.Wait()
	d, err := Open(root)
	if err != nil {
		t.Fatalf("open after the holder was killed: %v", err)
	}
	_ = d.Close()
}
