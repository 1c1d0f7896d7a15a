package process

import (
	"context"
	"os"
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

// A 12 MB text from a contact reaches the webhook cut to 64 KiB, with its
// whole size; what the bridge stores of it is the cut text (bridge.db grew
// by 37-157 MB for one such text before). The peak resident memory is
// logged: whatsmeow still decodes the whole message before the cut.
func TestLongIncomingTextIsCut(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	dataDir := t.TempDir()
	p := linkedBridge(t, sim, dataDir, hooks.env()...)
	contact := sim.Contact(alice, "Alice")
	pid := p.cmd.Process.Pid
	peakBefore, dbBefore := procKB(t, pid, "VmHWM:"), dirBytes(t, dataDir)
	const size = 12 << 20
	if _, err := contact.SendText(context.Background(), types.NewJID(testAccount, types.DefaultUserServer), strings.Repeat("x", size)); err != nil {
		t.Fatal(err)
	}
	up := hooks.wait("message.upsert", func(e hookEvent) bool { return e.str("event") == "message.upsert" })
	cuts, _ := up.Payload["truncated"].([]any)
	cut, _ := func() (map[string]any, bool) {
		if len(cuts) != 1 {
			return nil, false
		}
		m, ok := cuts[0].(map[string]any)
		return m, ok
	}()
	if len(up.str("text")) != 64<<10 || cut["field"] != "text" || cut["size"] != float64(size) {
		t.Errorf("upsert of a %d-byte text: text of %d bytes, truncated %v", size, len(up.str("text")), up.Payload["truncated"])
	}
	peakAfter, dbAfter := procKB(t, pid, "VmHWM:"), dirBytes(t, dataDir)
	t.Logf("a %d MB text: peak RSS %d -> %d MB; DATA_DIR's files (bridge.db and its WAL) %d -> %d KB",
		size>>20, peakBefore>>10, peakAfter>>10, dbBefore>>10, dbAfter>>10)
	if grown := dbAfter - dbBefore; grown > 8<<20 {
		t.Errorf("DATA_DIR's databases grew by %d bytes for one text", grown)
	}
}
