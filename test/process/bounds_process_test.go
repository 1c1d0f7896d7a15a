package process

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// procKB reads a field of /proc/<pid>/status, in kB.
func procKB(t *testing.T, pid int, field string) int {
	t.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// dirBytes is what the files directly in dir hold.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// incomingPeakBound is what one incoming message may add to the bridge's
// peak resident memory (VmHWM): the frame that carries it, read and
// decrypted in place, and no more. docs/user/receiving-and-media.md
// documents it beside the figures under a 256 MiB memory cgroup.
const incomingPeakBound = 64 << 10 // kB

// A 12 MB text from a contact is recorded, not decrypted: the upsert has
// no text and its size in truncated (field message), and the bridge's peak
// memory rises by less than incomingPeakBound (34 -> 301 MB before: the
// ciphertext, the plaintext, the buffered plaintext and the decoded string
// at once). A 1 MiB text, within what the bridge decrypts, reaches the
// webhook cut to 64 KiB with its whole size, and what the bridge stores of
// either is the cut (bridge.db grew by 37-157 MB for one such text).
func TestLongIncomingTextIsCut(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	dataDir := t.TempDir()
	p := linkedBridge(t, sim, dataDir, hooks.env()...)
	contact := sim.Contact(alice, "Alice")
	account := types.NewJID(testAccount, types.DefaultUserServer)
	pid := p.cmd.Process.Pid
	memcg := chargeToMemcg(t, pid)
	peakBefore, dbBefore := procKB(t, pid, "VmHWM:"), dirBytes(t, dataDir)
	const huge = 12 << 20
	id, err := contact.SendText(context.Background(), account, strings.Repeat("x", huge))
	if err != nil {
		t.Fatal(err)
	}
	up := hooks.wait("message.upsert", func(e hookEvent) bool { return e.str("whatsapp_id") == id })
	cut := onlyCut(up)
	if up.str("text") != "" || cut["field"] != "message" || cut["size"].(float64) < huge {
		t.Errorf("upsert of a %d-byte text: text of %d bytes, truncated %v", huge, len(up.str("text")), up.Payload["truncated"])
	}
	peakAfter := procKB(t, pid, "VmHWM:")
	t.Logf("a %d MB text: peak RSS %d -> %d MB", huge>>20, peakBefore>>10, peakAfter>>10)
	memcg.report(t)
	if rise := peakAfter - peakBefore; rise > incomingPeakBound {
		t.Errorf("one %d MB text raised the peak resident memory by %d MB, over the bound of %d MB", huge>>20, rise>>10, incomingPeakBound>>10)
	}
	const long = 1 << 20
	id, err = contact.SendText(context.Background(), account, strings.Repeat("y", long))
	if err != nil {
		t.Fatal(err)
	}
	up = hooks.wait("message.upsert", func(e hookEvent) bool { return e.str("whatsapp_id") == id })
	if cut := onlyCut(up); len(up.str("text")) != 64<<10 || cut["field"] != "text" || cut["size"] != float64(long) {
		t.Errorf("upsert of a %d-byte text: text of %d bytes, truncated %v", long, len(up.str("text")), up.Payload["truncated"])
	}
	dbAfter := dirBytes(t, dataDir)
	t.Logf("DATA_DIR's files (bridge.db and its WAL) %d -> %d KB", dbBefore>>10, dbAfter>>10)
	if grown := dbAfter - dbBefore; grown > 8<<20 {
		t.Errorf("DATA_DIR's databases grew by %d bytes for two texts", grown)
	}
}

// onlyCut is the one entry of an upsert's truncated; nil unless exactly one.
func onlyCut(up hookEvent) map[string]any {
	cuts, _ := up.Payload["truncated"].([]any)
	if len(cuts) != 1 {
		return map[string]any{"size": float64(0)}
	}
	m, _ := cuts[0].(map[string]any)
	return m
}

// memcg is a cgroup v1 memory cgroup the bridge was moved into (MEMCG), or
// none.
type memcg string

// chargeToMemcg moves the bridge process pid, with what it has charged so
// far, into a memory cgroup: the one MEMCG names, a directory under the v1
// memory hierarchy made with the limit to measure under, e.g.
//
//	mkdir /sys/fs/cgroup/memory/msgbridge-test
//	echo 256M > /sys/fs/cgroup/memory/msgbridge-test/memory.limit_in_bytes
//	MEMCG=/sys/fs/cgroup/memory/msgbridge-test go test ./test/process -run TestLongIncomingTextIsCut -v
//
// or, when MEMCG is unset and the v1 memory hierarchy is writable (root, as
// CI runs), one made for the test with testMemcgLimit and removed after it.
// Elsewhere (cgroup v2, no root) none: the test then bounds the RSS alone.
func chargeToMemcg(t *testing.T, pid int) memcg {
	dir := os.Getenv("MEMCG")
	if dir == "" {
		dir = testMemcg(t, pid)
		if dir == "" {
			return ""
		}
	}
	// What it charged before stays with its old cgroup where the kernel no
	// longer moves charges (move_charge_at_immigrate is deprecated): the
	// limit then holds what it allocates from here on, the message.
	_ = os.WriteFile(filepath.Join(dir, "memory.move_charge_at_immigrate"), []byte("3"), 0o600)
	for _, w := range [][2]string{{"cgroup.procs", strconv.Itoa(pid)}, {"memory.max_usage_in_bytes", "0"}} {
		if err := os.WriteFile(filepath.Join(dir, w[0]), []byte(w[1]), 0o600); err != nil {
			t.Fatalf("MEMCG: %v", err)
		}
	}
	return memcg(dir)
}

// testMemcgLimit is the pod memory limit the test holds a bridge to: the
// chart's default limit, the lowest a pod of the project is given.
const testMemcgLimit = "256M"

// testMemcg makes a v1 memory cgroup limited to testMemcgLimit for the
// test, and at its end moves pid back to the root cgroup and removes it;
// "" when the hierarchy is not there or not writable.
func testMemcg(t *testing.T, pid int) string {
	const root = "/sys/fs/cgroup/memory"
	dir := filepath.Join(root, "msgbridge-test-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Logf("no memory cgroup for the bridge (%v): the RSS bound alone", err)
		return ""
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o600)
		_ = os.Remove(dir)
	})
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(testMemcgLimit), 0o600); err != nil {
		t.Fatalf("limit the test's memory cgroup: %v", err)
	}
	return dir
}

// report logs the cgroup's limit, peak usage, failed charges and OOM kills,
// and fails the test when the OOM killer ended a process in it.
func (m memcg) report(t *testing.T) {
	if m == "" {
		return
	}
	defer func() {
		if b, err := os.ReadFile(filepath.Join(string(m), "memory.oom_control")); err == nil &&
			!strings.Contains(string(b), "oom_kill 0") && strings.Contains(string(b), "oom_kill ") {
			t.Errorf("the OOM killer ended the bridge under the memory cgroup's limit: %s", b)
		}
	}()
	read := func(file string) string {
		b, err := os.ReadFile(filepath.Join(string(m), file))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	oom := read("memory.oom_control")
	t.Logf("memory cgroup %s: limit %s, peak usage %s, failed charges %s, %s", m, read("memory.limit_in_bytes"),
		read("memory.max_usage_in_bytes"), read("memory.failcnt"), strings.ReplaceAll(oom, "\n", ", "))
}
