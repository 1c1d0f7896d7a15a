package prefault

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/workingset"
)

// TestExecutableMapsTheCodeInOneCall gives the test binary's read-only
// pages back (as the bridge's trim does), then maps them again with
// Executable and reads from the kernel how much of its code is resident.
func TestExecutableMapsTheCodeInOneCall(t *testing.T) {
	if _, err := workingset.Trim(); err != nil {
		t.Fatal(err)
	}
	before := residentCode(t)
	mapped, err := mapExecutable()
	if errors.Is(err, syscall.EINVAL) {
		t.Skipf("this kernel has no MADV_POPULATE_READ (Linux 5.14): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	after := residentCode(t)
	size := after.size
	if mapped < size {
		t.Errorf("mapped %d bytes, less than the code's mapping of %d", mapped, size)
	}
	// Everything but the pages that were never read from disk (the kernel
	// maps what the file has; a mapping's tail past the file's end stays).
	if after.rss < size*9/10 {
		t.Errorf("code resident after mapExecutable: %d of %d bytes (before: %d)", after.rss, size, before.rss)
	}
	// The test's own run maps part of its code again after the trim; what
	// it left unmapped must be enough for the test to show something.
	if after.rss < before.rss+size/5 {
		t.Errorf("code resident after the trim %d, after mapExecutable %d, of %d bytes: the test shows nothing", before.rss, after.rss, size)
	}
}

type residence struct{ size, rss uintptr }

// residentCode reads the executable's code mapping (r-xp) from
// /proc/self/smaps: its size and how much of it the page tables map.
func residentCode(t *testing.T) residence {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var r residence
	inCode := false
	for _, line := range strings.Split(string(smaps), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 6 && strings.Contains(fields[0], "-"):
			inCode = fields[1] == "r-xp" && fields[5] == exe
		case inCode && len(fields) == 3 && fields[0] == "Size:":
			r.size += kilobytes(t, fields[1])
		case inCode && len(fields) == 3 && fields[0] == "Rss:":
			r.rss += kilobytes(t, fields[1])
		}
	}
	if r.size == 0 {
		t.Fatalf("no code mapping of %s in /proc/self/smaps", exe)
	}
	return r
}

func kilobytes(t *testing.T, s string) uintptr {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return uintptr(n) << 10
}
