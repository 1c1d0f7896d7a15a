package media

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testKey(t testing.TB) []byte {
	t.Helper()
	k, err := DeriveKey(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Writes at any offset, a truncation and reads at any offset see the
// plaintext; the disk holds none of it.
func TestSealedRoundTrip(t *testing.T) {
	key := testKey(t)
	path := filepath.Join(t.TempDir(), NewID())
	f, err := Create(path, key)
	if err != nil {
		t.Fatal(err)
	}
	plain := bytes.Repeat([]byte("the customer's passport scan "), 5000)
	// Out of order and unaligned, as a download that retries might.
	for _, cut := range [][2]int{{100, 4097}, {0, 100}, {4097, len(plain)}} {
		if _, err := f.WriteAt(plain[cut[0]:cut[1]], int64(cut[0])); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Write([]byte("trailing padding")); err != nil { // at pos 0: overwrites
		t.Fatal(err)
	}
	copy(plain, "trailing padding")
	if err := f.Truncate(int64(len(plain) - 7)); err != nil {
		t.Fatal(err)
	}
	plain = plain[:len(plain)-7]
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(plain)) {
		t.Fatalf("stat %v %v", fi, err)
	}
	_ = f.Close()
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte("passport")) {
		t.Fatal("plaintext on disk")
	}
	g, err := Open(path, key)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	all, err := io.ReadAll(g)
	if err != nil || !bytes.Equal(all, plain) {
		t.Fatalf("read back %d bytes (%v), want %d", len(all), err, len(plain))
	}
	mid := make([]byte, 333)
	if _, err := g.ReadAt(mid, 12345); err != nil || !bytes.Equal(mid, plain[12345:12345+333]) {
		t.Fatalf("ReadAt: %v", err)
	}
}

// http.ServeContent answers Range requests from a sealed file.
func TestSealedServesRanges(t *testing.T) {
	key := testKey(t)
	path := filepath.Join(t.TempDir(), NewID())
	f, _ := Create(path, key)
	plain := make([]byte, 100000)
	_, _ = rand.Read(plain)
	_, _ = f.Write(plain)
	_ = f.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g, err := Open(path, key)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer func() { _ = g.Close() }()
		w.Header().Set("Content-Type", "video/mp4")
		http.ServeContent(w, r, "clip.mp4", time.Time{}, g)
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Range", "bytes=99990-")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, plain[99990:]) || resp.ContentLength != 10 {
		t.Fatalf("%d %d %x", resp.StatusCode, resp.ContentLength, body)
	}
}

func TestOpenRefusesOtherFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	_ = os.WriteFile(path, []byte("not sealed at all, plain bytes"), 0o600)
	if _, err := Open(path, testKey(t)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err %v", err)
	}
}

func TestParseID(t *testing.T) {
	good := NewID()
	for _, c := range []struct {
		in string
		ok bool
	}{
		{good, true},
		{"med_0123456789abcdef0123456789abcdef", true},
		{"med_0123456789ABCDEF0123456789abcdef", false},
		{"med_0123456789abcdef0123456789abcde", false},
		{"med_0123456789abcdef0123456789abcdef0", false},
		{"0123456789abcdef0123456789abcdef", false},
		{"med_../../../../etc/passwd/aaaaaaaaaaa", false},
		{"", false},
	} {
		if _, err := ParseID(c.in); (err == nil) != c.ok {
			t.Errorf("ParseID(%q): %v", c.in, err)
		}
	}
}

func FuzzParseID(f *testing.F) {
	f.Add(NewID())
	f.Add("med_")
	f.Add("med_../x")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			return
		}
		if id != s || len(id) != 36 || strings.ContainsAny(id, "/\\.") || filepath.Base(id) != id {
			t.Fatalf("accepted %q", s)
		}
	})
}
