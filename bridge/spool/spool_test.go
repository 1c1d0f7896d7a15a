package spool

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// The spool's measure counts a file once however many sends link to it.
func TestDirBytesCountsLinksOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "upload"), bytes.Repeat([]byte{1}, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"send-1", "send-2"} {
		if err := os.Link(filepath.Join(dir, "upload"), filepath.Join(dir, name)); err != nil {
			t.Skipf("no hard links here: %v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "other"), []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := Bytes(dir); got != 103 {
		t.Errorf("Bytes = %d, want 103", got)
	}
}

func TestSniffType(t *testing.T) {
	for _, c := range []struct {
		head []byte
		name string
		want string
	}{
		{[]byte("\x89PNG\r\n\x1a\n"), "x.jpg", "image/png"}, // content wins over the name
		{[]byte("%PDF-1.7"), "x.bin", "application/pdf"},
		{[]byte("PK\x03\x04"), "report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{[]byte("a,b\n1,2\n"), "data.csv", "text/csv; charset=utf-8"},
		{[]byte{0, 1, 2, 3}, "blob", "application/octet-stream"},
	} {
		if got := SniffType(c.head, c.name); got != c.want {
			t.Errorf("SniffType(%q, %q) = %q, want %q", c.head, c.name, got, c.want)
		}
	}
}

// FuzzSniffType: whatever the content and name, a file is typed as image,
// video or audio only when its content says so.
func FuzzSniffType(f *testing.F) {
	f.Add([]byte("not an image at all"), "fake.jpg")
	f.Add([]byte("\x89PNG\r\n\x1a\n"), "a.png")
	f.Add([]byte("OggS\x00\x02OpusHead"), "a.ogg")
	f.Add([]byte("\x00\x00\x00\x18ftypmp42"), "a.mp4")
	f.Add([]byte("\xff\xfb\x90\x00"), "a.mp3")
	f.Fuzz(func(t *testing.T, head []byte, name string) {
		got := SniffType(head, name)
		if IsMediaFamily(got) && SniffType(head, "x") != got {
			t.Fatalf("%q named %q is %s only by its name", head, name, got)
		}
	})
}

// Item 6: any write error while spooling is the bridge's disk: 507.
func TestSpoolWriteErrorIsInsufficientStorage(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer func() { _ = full.Close() }()
	w := &spoolWriter{out: full, space: &Space{}, sum: sha256.New()}
	_, err = w.Write([]byte("content"))
	if bridge.ErrorKind(err) != bridge.KindInsufficientStorage || bridge.ErrorOf(err).Code != "insufficient_storage" {
		t.Errorf("ENOSPC: %v", err)
	}
}
