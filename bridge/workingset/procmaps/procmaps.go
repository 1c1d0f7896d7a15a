// Package procmaps reads the lines of /proc/self/maps (and the mapping
// lines of /proc/self/smaps) that describe the executable's read-only
// mappings. It works on bytes and imports nothing but unsafe: package
// prefault reads them before any other package has initialised, and
// package workingset reads them to give the pages back.
package procmaps

import "unsafe"

// Span is one mapping, [Start, End).
type Span struct{ Start, End uintptr }

// Size is the span's length in bytes.
func (s Span) Size() uintptr { return s.End - s.Start }

// ReadOnlySpans lists the mappings of the executable exe in maps, the text
// of /proc/self/maps ("start-end perms offset dev inode path" per line),
// that cannot be written: its code and read-only data. A line it cannot
// read is skipped.
func ReadOnlySpans(maps, exe []byte) []Span {
	var spans []Span
	for len(maps) > 0 {
		line := maps
		if i := indexByte(maps, '\n'); i >= 0 {
			line, maps = maps[:i], maps[i+1:]
		} else {
			maps = nil
		}
		if s, ok := ReadOnlySpan(line, exe); ok {
			spans = append(spans, s)
		}
	}
	return spans
}

// ReadOnlySpan reads one line of /proc/self/maps: the mapping it
// describes when the mapping is of exe and cannot be written.
func ReadOnlySpan(line, exe []byte) (Span, bool) {
	start, line, ok := hexUntil(line, '-')
	if !ok {
		return Span{}, false
	}
	end, line, ok := hexUntil(line, ' ')
	if !ok || end <= start {
		return Span{}, false
	}
	// perms, four letters: r, then - where a writable mapping has w.
	if len(line) < 5 || line[0] != 'r' || line[1] != '-' || line[2] == ' ' || line[3] == ' ' || line[4] != ' ' {
		return Span{}, false
	}
	// offset, dev and inode, then spaces up to the path.
	rest := line[5:]
	for field := 0; field < 3; field++ {
		i := indexByte(rest, ' ')
		if i <= 0 {
			return Span{}, false
		}
		rest = rest[i+1:]
	}
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	if string(rest) != string(exe) {
		return Span{}, false
	}
	return Span{Start: start, End: end}, true
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
