package procmaps

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A static executable's mappings (as the bridge's image runs it), then a
// position-independent one's, with the other kinds of line around them.
const sampleMaps = `00400000-00ff4000 r-xp 00000000 fe:00 1234                               /usr/local/bin/bridge
00ff4000-0212b000 r--p 00bf4000 fe:00 1234                               /usr/local/bin/bridge
0212b000-021e5000 rw-p 01d2b000 fe:00 1234                               /usr/local/bin/bridge
021e5000-04235000 rw-p 00000000 00:00 0 
c000000000-c000400000 rw-p 00000000 00:00 0 
55b3504cc000-55b3504fb000 r--p 00000000 fe:00 246999                     /usr/local/bin/bridge (deleted)
7f1e2c000000-7f1e2c021000 r--p 00000000 fe:00 777                        /usr/lib/other.so
7ffd1a3f2000-7ffd1a3f6000 r--p 00000000 00:00 0                          [vvar]
7ffd1a3f6000-7ffd1a3f8000 r-xp 00000000 00:00 0                          [vdso]
`

func TestReadOnlySpans(t *testing.T) {
	tests := []struct {
		name, exe string
		want      []Span
	}{
		{"static executable: code and read-only data, not the writable data", "/usr/local/bin/bridge",
			[]Span{{0x400000, 0xff4000}, {0xff4000, 0x212b000}}},
		{"an executable replaced on disk keeps its mappings", "/usr/local/bin/bridge (deleted)",
			[]Span{{0x55b3504cc000, 0x55b3504fb000}}},
		{"another file's mappings are not the executable's", "/usr/lib/other", nil},
		{"the kernel's own mappings have no file", "[vdso]", []Span{{0x7ffd1a3f6000, 0x7ffd1a3f8000}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ReadOnlySpans([]byte(sampleMaps), []byte(tt.exe))
			if !slices.Equal(got, tt.want) {
				t.Errorf("ReadOnlySpans(exe %q) = %x, want %x", tt.exe, got, tt.want)
			}
		})
	}
}

func TestReadOnlySpansSkipsWhatItCannotRead(t *testing.T) {
	const exe = "/bridge"
	for _, line := range []string{
		"",
		"00400000 r-xp 00000000 fe:00 1 /bridge", // no end
		"00400000-00300000 r-xp 00000000 fe:00 1 /bridge",            // end before start
		"0040000g-00500000 r-xp 00000000 fe:00 1 /bridge",            // not hexadecimal
		"00400000-00500000 rwxp 00000000 fe:00 1 /bridge",            // writable
		"00400000-00500000 ---p 00000000 fe:00 1 /bridge",            // not readable
		"00400000-00500000 r-xp 00000000 fe:00 1 /bridge2",           // another file
		"00400000-00500000 r-xp 00000000 fe:00",                      // cut short
		"10000000000000000-20000000000000000 r-xp 0 fe:00 1 /bridge", // more digits than an address
	} {
		if got := ReadOnlySpans([]byte(line), []byte(exe)); len(got) != 0 {
			t.Errorf("ReadOnlySpans(%q) = %x, want none", line, got)
		}
	}
	// A last line without its newline (a buffer that filled) still counts.
	got := ReadOnlySpans([]byte("00400000-00500000 r-xp 00000000 fe:00 1 /bridge"), []byte(exe))
	if want := []Span{{0x400000, 0x500000}}; !slices.Equal(got, want) {
		t.Errorf("last line without newline: %x, want %x", got, want)
	}
}

// FuzzReadOnlySpans compares ReadOnlySpans, written for a process that has
// initialised no other package (prefault), with the same reading written
// plainly.
func FuzzReadOnlySpans(f *testing.F) {
	f.Add([]byte(sampleMaps), []byte("/usr/local/bin/bridge"))
	f.Add([]byte("0-1 r-xp 0 0 0 x\n"), []byte("x"))
	f.Fuzz(func(t *testing.T, maps, exe []byte) {
		got, want := ReadOnlySpans(maps, exe), plainReadOnlySpans(string(maps), string(exe))
		if !slices.Equal(got, want) {
			t.Fatalf("ReadOnlySpans(%q, %q) = %x, want %x", maps, exe, got, want)
		}
	})
}

// plainReadOnlySpans is ReadOnlySpans with the strings and strconv packages.
func plainReadOnlySpans(maps, exe string) []Span {
	var spans []Span
	for _, line := range strings.Split(maps, "\n") {
		addrs, rest, _ := strings.Cut(line, " ")
		lo, hi, _ := strings.Cut(addrs, "-")
		perms, rest, _ := strings.Cut(rest, " ")
		fieldsOK := true
		for range 3 { // offset, dev, inode
			var field string
			field, rest, _ = strings.Cut(rest, " ")
			fieldsOK = fieldsOK && field != ""
		}
		start, err1 := parseAddress(lo)
		end, err2 := parseAddress(hi)
		if err1 == nil && err2 == nil && end > start && len(perms) == 4 && perms[:2] == "r-" &&
			fieldsOK && strings.TrimLeft(rest, " ") == exe {
			spans = append(spans, Span{Start: uintptr(start), End: uintptr(end)})
		}
	}
	return spans
}

// parseAddress reads an address as the kernel writes it: lower-case
// hexadecimal digits, at most 16.
func parseAddress(s string) (uint64, error) {
	if s == "" || len(s) > 16 || strings.ToLower(s) != s || strings.ContainsAny(s, "+-_xX") {
		return 0, errors.New("not an address")
	}
	return strconv.ParseUint(s, 16, 64)
}
