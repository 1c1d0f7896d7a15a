package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The cluster's node is this machine: its pods' processes are this
// machine's, in the kubepods cgroups (cgroupfs driver). These read them
// from /proc and /sys/fs/cgroup, as the kubelet's own stats do.

// podProcesses are the pids of the processes named comm in a pod.
func podProcesses(t *testing.T, comm string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		name, err1 := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		cgroup, err2 := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if err1 == nil && err2 == nil && strings.TrimSpace(string(name)) == comm && strings.Contains(string(cgroup), "kubepods") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processRSS is VmRSS of pid in bytes.
func processRSS(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS for pid %d", pid)
	return 0
}

// processCPU is the user and system CPU time pid used so far (USER_HZ 100).
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command, which may hold spaces, in parentheses.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("parsing /proc/%d/stat: %v %v", pid, err1, err2)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// kubepodsMemory is the memory the kubepods cgroup (every pod) uses, bytes:
// cgroup v1's memory.usage_in_bytes, or v2's memory.current.
func kubepodsMemory(t *testing.T) int64 {
	t.Helper()
	for _, p := range []string{"/sys/fs/cgroup/memory/kubepods/memory.usage_in_bytes", "/sys/fs/cgroup/kubepods/memory.current"} {
		if b, err := os.ReadFile(p); err == nil {
			v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Log("no kubepods memory cgroup found")
	return 0
}

// The readers parse this process's own entries: the fleet benchmark must
// not find a parse error only after its cluster is up.
func TestProcReaders(t *testing.T) {
	pid := os.Getpid()
	if rss := processRSS(t, pid); rss < 1<<20 {
		t.Errorf("RSS of this test process: %d bytes", rss)
	}
	before := processCPU(t, pid)
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); { //nolint:revive // burns CPU on purpose
	}
	if after := processCPU(t, pid); after < before {
		t.Errorf("CPU time went back from %s to %s", before, after)
	}
	if pids := podProcesses(t, "no-such-command"); len(pids) != 0 {
		t.Errorf("found %v", pids)
	}
	if usage, ws := cgroupMemory(t, pid); usage < 1<<20 || ws > usage {
		t.Errorf("this process's memory cgroup: usage %d, working set %d bytes", usage, ws)
	}
}

// cgroupMemory is what the memory cgroup of pid is charged, as the kubelet
// reads a container: usage, and the working set it evicts and reports by
// (usage less inactive file pages). cgroup v1 and v2.
func cgroupMemory(t *testing.T, pid int) (usage, workingSet int64) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	if err != nil {
		t.Fatal(err)
	}
	dir, current, inactive := "", "", ""
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		switch {
		case len(parts) == 3 && parts[1] == "memory":
			dir, current, inactive = filepath.Join("/sys/fs/cgroup/memory", parts[2]), "memory.usage_in_bytes", "total_inactive_file"
		case len(parts) == 3 && parts[0] == "0" && parts[1] == "" && dir == "":
			dir, current, inactive = filepath.Join("/sys/fs/cgroup", parts[2]), "memory.current", "inactive_file"
		}
	}
	usage = readInt(t, filepath.Join(dir, current))
	stat, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(stat), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == inactive {
			n, _ := strconv.ParseInt(v, 10, 64)
			return usage, usage - min(n, usage)
		}
	}
	return usage, usage
}

func readInt(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
