package prefault

import (
	"syscall"

	"github.com/msgbridge/msgbridge/bridge/workingset/procmaps"
)

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14, <linux/mman.h>):
// fill the page tables of a range, reading its pages in where needed. The
// syscall package predates it, and golang.org/x/sys/unix, which has it,
// initialises after this package would have to.
const madvPopulateRead = 22

// mapsBufferSize holds /proc/self/maps at start-up: a static executable
// has some twenty mappings of about 100 bytes, the executable's listed
// first. A longer file is read up to here, which still holds them.
const mapsBufferSize = 8 << 10

func init() {
	// Here, before the packages after it initialise: mapping from a goroutine
	// beside them answered no sooner and used 1.6-4.9 ms more CPU (the pages it
	// had not reached yet faulted in as well). An error leaves the pages to
	// be faulted in one by one: slower, never wrong, and nothing at this
	// point could report it.
	_, _ = mapExecutable()
}

// mapExecutable maps the executable's read-only pages into the page tables
// and returns how many bytes of mappings it asked for.
func mapExecutable() (uintptr, error) {
	var exe [syscall.PathMax]byte
	n, err := syscall.Readlink("/proc/self/exe", exe[:])
	if err != nil {
		return 0, err
	}
	maps, err := readMaps()
	if err != nil {
		return 0, err
	}
	var total uintptr
	for _, s := range procmaps.ReadOnlySpans(maps, exe[:n]) {
		// The span is a live read-only mapping the kernel just listed;
		// its addresses never become Go pointers.
		_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, s.Start, s.Size(), madvPopulateRead)
		if errno != 0 {
			return total, errno
		}
		total += s.Size()
	}
	return total, nil
}

// readMaps reads /proc/self/maps, up to mapsBufferSize bytes.
func readMaps() ([]byte, error) {
	fd, err := syscall.Open("/proc/self/maps", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = syscall.Close(fd) }()
	buf := make([]byte, mapsBufferSize)
	filled := 0
	for filled < len(buf) {
		n, err := syscall.Read(fd, buf[filled:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		filled += n
	}
	return buf[:filled], nil
}
