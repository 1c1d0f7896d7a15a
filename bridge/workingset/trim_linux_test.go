package workingset

import (
	"bufio"
	"crypto/sha256"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgbridge/msgbridge/bridge/workingset/procmaps"
)

// The test binary's own read-only pages, mapped by its start-up and the
// tests before, leave the page tables, and only what runs after comes back.
func TestTrimGivesBackTheExecutablesPages(t *testing.T) {
	before := executableResidentKiB(t)
	size, err := Trim()
	if err != nil {
		t.Fatal(err)
	}
	after := executableResidentKiB(t)
	t.Logf("read-only executable pages resident: %d KiB before, %d KiB after (mappings of %d KiB)", before, after, size/1024)
	if size == 0 || before < 1024 {
		t.Fatalf("nothing to trim: %d KiB resident in %d bytes of mappings", before, size)
	}
	// Reading smaps runs code whose pages come back (64 KiB around each):
	// a quarter given back is far beyond what that noise could fake.
	if after > before*3/4 {
		t.Errorf("%d KiB still resident of %d", after, before)
	}
}

// executableResidentKiB sums the Rss of the executable's read-only
// mappings in /proc/self/smaps.
func executableResidentKiB(t *testing.T) int {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	total, counting := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 6 && strings.Contains(fields[0], "-") {
			_, counting = procmaps.ReadOnlySpan(sc.Bytes(), []byte(exe))
			continue
		}
		if counting && len(fields) == 3 && fields[0] == "Rss:" {
			kib, err := strconv.Atoi(fields[1])
			if err != nil {
				t.Fatal(err)
			}
			total += kib
		}
	}
	return total
}

// The process's CPU time grows with the work done: hashing 32 MiB takes
// well over 2 ms of CPU on any machine, however loaded (a fixed amount of
// work, not of wall time).
func TestCPUTimeCountsTheWorkDone(t *testing.T) {
	data := make([]byte, 32<<20)
	before := CPUTime()
	sum := sha256.Sum256(data)
	if used := CPUTime() - before; used < 2*time.Millisecond {
		t.Errorf("CPU time grew by %v while hashing 32 MiB (%x)", used, sum[:4])
	}
}

// BenchmarkTrim: one trim, reading /proc/self/smaps and giving the pages
// back, with the faults that map back the code the loop itself runs.
//
//	go test -run=NONE -bench=Trim ./bridge/workingset
func BenchmarkTrim(b *testing.B) {
	for b.Loop() {
		if _, err := Trim(); err != nil {
			b.Fatal(err)
		}
	}
}
