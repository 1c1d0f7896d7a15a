package workingset

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// Trim drops the executable's read-only pages from the process's page
// tables and reports how many bytes of mappings it went over.
func Trim() (uintptr, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("find the executable: %w", err)
	}
	maps, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("read the mappings: %w", err)
	}
	spans := ReadOnlySpans(maps, exe)
	_ = maps.Close()
	var total uintptr
	for _, s := range spans {
		// The span is a live read-only mapping of this process (the
		// kernel just listed it): the addresses never become Go pointers.
		_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, s.Start, s.Size(), syscall.MADV_DONTNEED)
		if errno != 0 {
			return total, fmt.Errorf("give back %#x-%#x: %w", s.Start, s.End, errno)
		}
		total += s.Size()
	}
	return total, nil
}

// CPUTime is the CPU time the process has used, user and system, all
// threads.
func CPUTime() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
