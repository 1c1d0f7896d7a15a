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

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// seal writes plain as a sealed file in pieces of piece bytes.
func seal(t testing.TB, path string, key, plain []byte, piece int) {
	t.Helper()
	w, err := Create(path, key)
	if err != nil {
		t.Fatal(err)
	}
	for rest := plain; len(rest) > 0; {
		k := min(piece, len(rest))
		if _, err := w.Write(rest[:k]); err != nil {
			t.Fatal(err)
		}
		rest = rest[k:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// Every size around the chunk boundaries reads back whole and at any
// offset; the disk holds none of the plaintext.
func TestSealedRoundTrip(t *testing.T) {
	key := testKey(t)
	for _, size := range []int{0, 1, chunkSize - 1, chunkSize, chunkSize + 1, 3*chunkSize + 5} {
		path := filepath.Join(t.TempDir(), "f")
		plain := bytes.Repeat([]byte("the customer's passport scan "), size/29+1)[:size]
		seal(t, path, key, plain, 7777)
		raw, _ := os.ReadFile(path)
		if size > 0 && bytes.Contains(raw, []byte("passport")) {
			t.Fatal("plaintext on disk")
		}
		r, err := Open(path, key)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		all, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(all, plain) || r.Size() != int64(size) {
			t.Fatalf("size %d: read back %d bytes (%v), size %d", size, len(all), err, r.Size())
		}
		if size > 10 {
			off := int64(size / 3)
			mid := make([]byte, size-int(off)-1)
			if _, err := r.ReadAt(mid, off); err != nil || !bytes.Equal(mid, plain[off:size-1]) {
				t.Fatalf("size %d: ReadAt: %v", size, err)
			}
		}
		_ = r.Close()
	}
}

// http.ServeContent answers Range requests from a sealed file.
func TestSealedServesRanges(t *testing.T) {
	key := testKey(t)
	path := filepath.Join(t.TempDir(), NewID())
	plain := randomBytes(3*chunkSize + 100)
	seal(t, path, key, plain, 1<<20)
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
	for rng, want := range map[string][]byte{
		"bytes=196600-":       plain[196600:],
		"bytes=65530-65545":   plain[65530:65546],
		"bytes=-10":           plain[len(plain)-10:],
		"bytes=0-0":           plain[:1],
		"bytes=131072-131072": plain[131072:131073],
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Range", rng)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, want) || resp.ContentLength != int64(len(want)) {
			t.Errorf("%s: %d, %d bytes", rng, resp.StatusCode, len(body))
		}
	}
}

// A sealed file changed in any way is refused: at Open when the header or
// the last chunk changed or the length did, at the read of a changed chunk
// otherwise. Nothing of a changed chunk is ever returned.
func TestSealedRefusesTampering(t *testing.T) {
	key := testKey(t)
	plain := randomBytes(4 * chunkSize)
	chunk := func(i int) int64 { return int64(headerLen + i*sealedLen) }
	cases := map[string]func(raw []byte) []byte{
		"magic":                 func(raw []byte) []byte { raw[3] = '1'; return raw },
		"salt":                  func(raw []byte) []byte { raw[5] ^= 1; return raw },
		"first chunk":           func(raw []byte) []byte { raw[chunk(0)+10] ^= 1; return raw },
		"middle chunk":          func(raw []byte) []byte { raw[chunk(2)+100] ^= 0x80; return raw },
		"tag of the last chunk": func(raw []byte) []byte { raw[len(raw)-1] ^= 1; return raw },
		"truncated by a chunk":  func(raw []byte) []byte { return raw[:chunk(3)] },
		"truncated by a byte":   func(raw []byte) []byte { return raw[:len(raw)-1] },
		"appended":              func(raw []byte) []byte { return append(raw, raw[chunk(1):chunk(2)]...) },
		"chunks swapped": func(raw []byte) []byte {
			one := bytes.Clone(raw[chunk(0):chunk(1)])
			copy(raw[chunk(0):], raw[chunk(1):chunk(2)])
			copy(raw[chunk(1):], one)
			return raw
		},
		"header only": func(raw []byte) []byte { return raw[:headerLen] },
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			seal(t, path, key, plain, 1<<20)
			raw, _ := os.ReadFile(path)
			if err := os.WriteFile(path, tamper(raw), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path, key)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("Open: %v, want ErrCorrupt", err)
				}
				return
			}
			defer func() { _ = r.Close() }()
			got, err := io.ReadAll(r)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("read %d bytes of a tampered file without ErrCorrupt (%v)", len(got), err)
			}
			if !bytes.Equal(got, plain[:len(got)]) || len(got)%chunkSize != 0 {
				t.Fatalf("returned %d bytes, not whole intact chunks", len(got))
			}
		})
	}
	path := filepath.Join(t.TempDir(), "f")
	seal(t, path, key, plain, 1<<20)
	other, _ := DeriveKey(bytes.Repeat([]byte{8}, 32))
	if _, err := Open(path, other); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("another key: %v", err)
	}
}

// The scratch file takes writes at any offset, a truncation and reads at
// any offset, as whatsmeow's in-place download does; the disk holds no
// plaintext.
func TestScratchRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.part")
	f, err := NewScratch(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Remove()
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
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte("passport")) {
		t.Fatal("plaintext on disk")
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(all, plain) {
		t.Fatalf("read back %d bytes (%v), want %d", len(all), err, len(plain))
	}
	mid := make([]byte, 333)
	if _, err := f.ReadAt(mid, 12345); err != nil || !bytes.Equal(mid, plain[12345:12345+333]) {
		t.Fatalf("ReadAt: %v", err)
	}
	if _, err := NewScratch(path); err == nil {
		t.Fatal("NewScratch over an existing file")
	}
}

// Open reads files from disk, which something else may have written: any
// content is refused or read without a panic, and never read as
// plaintext unless it authenticates.
func FuzzOpen(f *testing.F) {
	key := testKey(f)
	dir := f.TempDir()
	good := filepath.Join(dir, "good")
	seal(f, good, key, []byte("hello, sealed world"), 5)
	raw, _ := os.ReadFile(good)
	f.Add(raw)
	f.Add([]byte("MBM2"))
	f.Add(append([]byte("MBM2"), make([]byte, saltLen+tagLen)...))
	f.Add([]byte("not sealed at all, plain bytes"))
	f.Fuzz(func(t *testing.T, content []byte) {
		path := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path, key)
		if err != nil {
			return
		}
		defer func() { _ = r.Close() }()
		got, err := io.ReadAll(r)
		// The only sealed files of this key a fuzzer can make are the
		// seed's (sealed again in each fuzzing process, with a new salt).
		if err == nil && string(got) != "hello, sealed world" {
			t.Fatalf("read %q from a file that is not a sealed one", got)
		}
	})
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
