package workingset

import (
	"strings"
	"testing"
)

const sampleSmaps = `00400000-00ec4000 r-xp 00000000 08:01 1234   /usr/local/bin/bridge
Size:              11024 kB
Rss:                9424 kB
Anonymous:             0 kB
00ec4000-01ea2000 r--p 00ac4000 08:01 1234   /usr/local/bin/bridge
Rss:                9632 kB
Anonymous:             0 kB
01ea2000-01f43000 r--p 01aa2000 08:01 1234   /usr/local/bin/bridge
Rss:                 452 kB
Anonymous:           452 kB
01f43000-01f50000 rw-p 01b43000 08:01 1234   /usr/local/bin/bridge
Anonymous:             0 kB
01f50000-03f92000 rw-p 00000000 00:00 0
7f29bec79000-7f29bece8000 r--p 00000000 08:01 99   /usr/lib/locale/C.utf8
7ffd1000-7ffd2000 r-xp 00000000 00:00 0   [vdso]
zz-01000000 r--p 00000000 08:01 1234   /usr/local/bin/bridge
02000000-01000000 r--p 00000000 08:01 1234   /usr/local/bin/bridge
`

// Writable mappings, other files, unreadable lines and a read-only mapping
// with written (relocated) pages are left out.
func TestReadOnlySpansKeepsOnlyTheExecutablesFilePages(t *testing.T) {
	got := ReadOnlySpans(strings.NewReader(sampleSmaps), "/usr/local/bin/bridge")
	want := []Span{{Start: 0x400000, End: 0xec4000}, {Start: 0xec4000, End: 0x1ea2000}}
	if len(got) != len(want) {
		t.Fatalf("spans %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("span %d: %x, want %x", i, got[i], want[i])
		}
	}
}

func FuzzReadOnlySpans(f *testing.F) {
	for _, line := range strings.Split(sampleSmaps, "\n") {
		f.Add(line)
	}
	f.Add(sampleSmaps)
	f.Fuzz(func(t *testing.T, maps string) {
		for _, s := range ReadOnlySpans(strings.NewReader(maps), "/usr/local/bin/bridge") {
			if s.End <= s.Start {
				t.Fatalf("empty or reversed span %x from %q", s, maps)
			}
		}
	})
}

// An executable replaced on disk while it runs is listed "(deleted)", as
// /proc/self/exe then reads too: its pages are still given back.
func TestReadOnlySpansOfAReplacedExecutable(t *testing.T) {
	const exe = "/usr/local/bin/bridge (deleted)"
	smaps := "00400000-00ec4000 r-xp 00000000 08:01 1234   " + exe + "\nRss:                9424 kB\nAnonymous:             0 kB\n"
	if got := ReadOnlySpans(strings.NewReader(smaps), exe); len(got) != 1 || got[0] != (Span{Start: 0x400000, End: 0xec4000}) {
		t.Errorf("spans %x, want the code mapping", got)
	}
}
