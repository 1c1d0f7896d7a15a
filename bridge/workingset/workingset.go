// Package workingset gives back the pages of the bridge's own executable
// that start-up touched and idle running does not need.
//
// Most of an idle bridge's resident memory is not its data but its program:
// start-up runs every package's initialisation, opens and migrates the
// databases and builds the HTTP routes, and the kernel maps the executable's
// pages around each one touched (fault-around, 64 KiB at a time), so about
// 19 MiB of a 28 MiB executable end up mapped while idle running reads about
// 4 MiB of it. Those pages are read-only and backed by the file: dropping
// them from the process's page tables (madvise MADV_DONTNEED) loses nothing;
// a page used again is mapped again from the page cache, which every bridge
// started from the same image shares. Writable mappings (the Go data and
// heap) are never touched. Idle running maps some pages back; Quiet says
// when to give them back again.
package workingset

import (
	"bufio"
	"io"
	"strings"

	"github.com/msgbridge/msgbridge/bridge/workingset/procmaps"
)

// Span is one read-only mapping of the executable.
type Span = procmaps.Span

// ReadOnlySpans lists the mappings of exe that are not writable and hold
// only the file's pages, from the text of /proc/self/smaps. A read-only
// mapping with anonymous pages was written before it became read-only (the
// relocations of a position-independent build): giving those back would
// bring back the file's unrelocated bytes, so it is left alone. A line it
// cannot read is skipped: the kernel writes this file, and a mapping left
// out is only a page not given back.
func ReadOnlySpans(smaps io.Reader, exe string) []Span {
	var spans []Span
	var current Span
	inExe := false
	flush := func() {
		if inExe {
			spans = append(spans, current)
		}
		inExe = false
	}
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		line := sc.Text()
		if s, ok := procmaps.ReadOnlySpan([]byte(line), []byte(exe)); ok {
			flush()
			current, inExe = s, true
			continue
		}
		if isMappingHeader(line) {
			flush()
			continue
		}
		if inExe && hasAnonymousPages(line) {
			inExe = false
		}
	}
	flush()
	return spans
}

// isMappingHeader reports whether line starts a mapping's block
// ("start-end perms ..."), as opposed to one of its "Key: value" lines.
func isMappingHeader(line string) bool {
	first, _, _ := strings.Cut(line, " ")
	return strings.Contains(first, "-") && !strings.HasSuffix(first, ":")
}

// hasAnonymousPages reports whether line is an "Anonymous:" line above 0 kB.
func hasAnonymousPages(line string) bool {
	rest, ok := strings.CutPrefix(line, "Anonymous:")
	return ok && strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")) != "0"
}
