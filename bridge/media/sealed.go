// Package media keeps incoming attachments: a row per attachment in
// bridge.db, registered with its message (Store), a background and
// on-demand download of each into an encrypted file under DATA_DIR/media
// (Downloader), and their expiry after MEDIA_RETENTION.
//
// A stored file is sealed: authenticated encryption in chunks (AES-256-GCM,
// 64 KiB of plaintext each, the STREAM construction: the nonce holds the
// chunk's index and a flag on the last one), under a key derived per file
// from the media key and a random salt in the file's header. Any chunk can
// be read alone, which Range requests need; a changed, moved, dropped or
// appended chunk fails to open, so a tampered file is refused, never
// served. Downloads are written into a Scratch file first (whatsmeow needs
// to rewrite it in place) and sealed from there.
package media

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// magic starts every sealed file; its version is the last byte.
var magic = [4]byte{'M', 'B', 'M', '2'}

const (
	saltLen   = 32
	headerLen = len(magic) + saltLen
	chunkSize = 64 << 10
	tagLen    = 16
	sealedLen = chunkSize + tagLen // a full chunk on disk
)

// DeriveKey is the media files' key from the decoded ENCRYPTION_KEY.
func DeriveKey(masterKey []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, masterKey, nil, "msgbridge media", 32)
}

// ErrCorrupt: a file that is not a sealed file of this key, or was changed.
var ErrCorrupt = errors.New("media: the file is not intact (not sealed with this key, or changed)")

// fileAEAD is the AEAD of one file: its key is derived from the media key
// and the file's salt.
func fileAEAD(key, salt []byte) (cipher.AEAD, error) {
	fileKey, err := hkdf.Key(sha256.New, key, salt, "msgbridge media file", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(fileKey)
	if err != nil {
		return nil, fmt.Errorf("media key: %w", err)
	}
	return cipher.NewGCM(block)
}

// nonce is chunk index's nonce: the index, big-endian, then the last flag.
func nonce(index uint64, last bool) []byte {
	var n [12]byte
	binary.BigEndian.PutUint64(n[3:11], index)
	if last {
		n[11] = 1
	}
	return n[:]
}

// Writer writes a new sealed file, front to back.
type Writer struct {
	f     *os.File
	aead  cipher.AEAD
	plain []byte // the chunk being filled
	out   []byte
	index uint64
}

// Create makes a new sealed file at path (mode 0600), failing if it exists.
// Close seals its last chunk and syncs it; Abort deletes it.
func Create(path string, key []byte) (*Writer, error) {
	salt := make([]byte, saltLen)
	_, _ = rand.Read(salt)
	aead, err := fileAEAD(key, salt)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // a path under DATA_DIR/media
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, aead: aead, plain: make([]byte, 0, chunkSize), out: make([]byte, 0, sealedLen)}
	if _, err := f.Write(append(magic[:], salt...)); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

// Write adds p to the file. A full chunk is sealed only when more follows,
// so that the last chunk, flagged as such, is sealed by Close.
func (w *Writer) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if len(w.plain) == chunkSize {
			if err := w.seal(false); err != nil {
				return n, err
			}
		}
		k := copy(w.plain[len(w.plain):chunkSize], p)
		w.plain = w.plain[:len(w.plain)+k]
		p, n = p[k:], n+k
	}
	return n, nil
}

func (w *Writer) seal(last bool) error {
	w.out = w.aead.Seal(w.out[:0], nonce(w.index, last), w.plain, nil)
	w.index++
	w.plain = w.plain[:0]
	_, err := w.f.Write(w.out)
	return err
}

// Close seals the last chunk, syncs the file to disk and closes it.
func (w *Writer) Close() error {
	err := w.seal(true)
	if err == nil {
		err = w.f.Sync()
	}
	return errors.Join(err, w.f.Close())
}

// Abort closes and deletes the file.
func (w *Writer) Abort() {
	_ = w.f.Close()
	_ = os.Remove(w.f.Name())
}

// Reader reads a sealed file's plaintext at any offset, authenticating each
// chunk it reads. Not safe for concurrent use.
type Reader struct {
	f      *os.File
	aead   cipher.AEAD
	size   int64 // the plaintext's
	chunks uint64
	pos    int64

	// The last chunk decrypted, for sequential reads.
	cached  uint64
	plain   []byte
	sealed  []byte
	isCache bool
}

// Open opens a sealed file for reading. It authenticates the last chunk,
// so a file that was truncated, extended or sealed with another key is
// refused here (ErrCorrupt); a chunk changed elsewhere fails when read.
func Open(path string, key []byte) (*Reader, error) {
	f, err := os.Open(path) //nolint:gosec // a path under DATA_DIR/media
	if err != nil {
		return nil, err
	}
	r, err := newReader(f, key)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return r, nil
}

func newReader(f *os.File, key []byte) (*Reader, error) {
	var head [headerLen]byte
	if _, err := io.ReadFull(f, head[:]); err != nil || [4]byte(head[:4]) != magic {
		return nil, ErrCorrupt
	}
	aead, err := fileAEAD(key, head[len(magic):])
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	body := fi.Size() - int64(headerLen)
	chunks := (body + sealedLen - 1) / sealedLen
	lastLen := body - (chunks-1)*sealedLen
	if chunks < 1 || lastLen < tagLen {
		return nil, ErrCorrupt
	}
	r := &Reader{f: f, aead: aead, chunks: uint64(chunks), size: (chunks-1)*chunkSize + lastLen - tagLen,
		plain: make([]byte, 0, chunkSize), sealed: make([]byte, sealedLen)}
	if err := r.load(r.chunks - 1); err != nil {
		return nil, err
	}
	return r, nil
}

// load decrypts chunk i into the cache.
func (r *Reader) load(i uint64) error {
	if r.isCache && r.cached == i {
		return nil
	}
	r.isCache = false
	n, err := r.f.ReadAt(r.sealed, int64(headerLen)+int64(i)*sealedLen) //nolint:gosec // i < chunks, which came from an int64
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	plain, err := r.aead.Open(r.plain[:0], nonce(i, i == r.chunks-1), r.sealed[:n], nil)
	if err != nil {
		return fmt.Errorf("%w: chunk %d does not authenticate", ErrCorrupt, i)
	}
	r.plain, r.cached, r.isCache = plain, i, true
	return nil
}

// Size is the plaintext's size.
func (r *Reader) Size() int64 { return r.size }

// ReadAt reads plaintext at off.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errNegativeOffset
	}
	n := 0
	for n < len(p) {
		if off >= r.size {
			return n, io.EOF
		}
		i := uint64(off / chunkSize)
		if err := r.load(i); err != nil {
			return n, err
		}
		k := copy(p[n:], r.plain[off%chunkSize:])
		n, off = n+k, off+int64(k)
	}
	return n, nil
}

func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.ReadAt(p, r.pos)
	r.pos += int64(n)
	if errors.Is(err, io.EOF) && n > 0 {
		err = nil
	}
	return n, err
}

// Seek moves the plaintext position.
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	base := int64(0)
	switch whence {
	case io.SeekCurrent:
		base = r.pos
	case io.SeekEnd:
		base = r.size
	}
	if base+offset < 0 {
		return 0, errors.New("media: seek before the start")
	}
	r.pos = base + offset
	return r.pos, nil
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }
