package metrics

import "testing"

// Command names may hold spaces and parentheses; the fields are counted
// from the last ')'.
func TestParseProcStat(t *testing.T) {
	line := "4242 (odd) (name ) S 1 4242 4242 0 -1 4194560 900 0 0 0 150 50 0 0 20 0 12 0 123456 1608441856 2894 18446744073709551615\n"
	got, err := parseProcStat([]byte(line), 4096)
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{cpuSeconds: 2, startSinceBoot: 1234.56, virtualBytes: 1608441856, residentBytes: 2894 * 4096}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := parseProcStat([]byte("4242 (short) S 1 2 3"), 4096); err == nil {
		t.Error("a truncated stat parsed")
	}
}

// parseProcStat reads what the kernel writes, but never panics on less.
func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("4242 (odd) (name ) S 1 4242 4242 0 -1 4194560 900 0 0 0 150 50 0 0 20 0 12 0 123456 1608441856 2894 0\n"))
	f.Add([]byte("1 (x) S"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = parseProcStat(data, 4096)
	})
}
