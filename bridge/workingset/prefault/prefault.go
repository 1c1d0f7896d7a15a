// Package prefault maps the pages of the bridge's own executable into the
// process's page tables in one call, as the process starts.
//
// Start-up runs every package's initialisation and then the bridge's first
// steps, touching code and read-only data scattered over most of a 30 MB
// executable. Each first touch of a page is a page fault, which maps the
// pages around it (64 KiB) from the page cache; on the virtual machines the
// bridge was measured on, some nine hundred of them took a third of the CPU
// a start used before its first answer. Asking the kernel to map every
// read-only page of the executable at once (madvise MADV_POPULATE_READ),
// on another core while the initialisation runs, makes the first answer
// come about 3 ms sooner there, and sooner still when the executable is
// not in the page cache (one sequential read instead of scattered ones).
//
// The package starts its work in init, and imports nothing but syscall and
// unsafe, so that it starts before the other packages' initialisation: Go
// initialises the packages sorted by import path, each once its own
// imports are initialised (the specification's "Package initialization"),
// and ours sorts before the libraries that cost most (go.mau.fi,
// golang.org, google.golang.org and most of the standard library). The
// main package imports it for that effect alone.
//
// The pages mapped are the file's, shared with every process of the same
// executable through the page cache, and nothing is copied; they count in
// the process's resident size (some 9 MiB more than start-up touched)
// until the bridge's working set trim (package workingset) drops them from
// the page tables, 5 s after start. On a kernel older than Linux 5.14 the
// call fails and start-up faults the pages in one by one, as before.
package prefault

import "unsafe"

// span is one mapping, [start, end).
type span struct{ start, end uintptr }

// readOnlySpans lists the mappings of the executable exe in maps, the text
// of /proc/self/maps ("start-end perms offset dev inode path" per line),
// that cannot be written: its code and read-only data. It works on bytes
// with no other package, as it runs before they initialise. A line it
// cannot read is skipped: a mapping left out is only faulted in later.
func readOnlySpans(maps, exe []byte) []span {
	var spans []span
	for len(maps) > 0 {
		line := maps
		if i := indexByte(maps, '\n'); i >= 0 {
			line, maps = maps[:i], maps[i+1:]
		} else {
			maps = nil
		}
		if s, ok := readOnlySpan(line, exe); ok {
			spans = append(spans, s)
		}
	}
	return spans
}

// readOnlySpan reads one line of /proc/self/maps.
func readOnlySpan(line, exe []byte) (span, bool) {
	start, line, ok := hexUntil(line, '-')
	if !ok {
		return span{}, false
	}
	end, line, ok := hexUntil(line, ' ')
	if !ok || end <= start {
		return span{}, false
	}
	// perms, four letters: r, then - where a writable mapping has w.
	if len(line) < 5 || line[0] != 'r' || line[1] != '-' || line[2] == ' ' || line[3] == ' ' || line[4] != ' ' {
		return span{}, false
	}
	// offset, dev and inode, then spaces up to the path.
	rest := line[5:]
	for field := 0; field < 3; field++ {
		i := indexByte(rest, ' ')
		if i <= 0 {
			return span{}, false
		}
		rest = rest[i+1:]
	}
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	if string(rest) != string(exe) {
		return span{}, false
	}
	return span{start: start, end: end}, true
}

// hexUntil reads the hexadecimal number that starts s and ends at sep,
// and returns what follows sep.
func hexUntil(s []byte, sep byte) (uintptr, []byte, bool) {
	var n uintptr
	const maxDigits = 2 * int(unsafe.Sizeof(uintptr(0))) // of an address
	for i, c := range s {
		if c == sep {
			return n, s[i+1:], i > 0
		}
		if i == maxDigits {
			return 0, nil, false
		}
		d, ok := hexDigit(c)
		if !ok {
			return 0, nil, false
		}
		n = n<<4 | d
	}
	return 0, nil, false
}

func hexDigit(c byte) (uintptr, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uintptr(c - '0'), true
	case 'a' <= c && c <= 'f':
		return uintptr(c-'a') + 10, true
	}
	return 0, false
}

func indexByte(s []byte, c byte) int {
	for i, b := range s {
		if b == c {
			return i
		}
	}
	return -1
}
