package media

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// Scratch is the file a download is written into: whatsmeow writes the
// encrypted download, checks its MAC, decrypts it in place and hashes it,
// so it must be read and written at any offset. It is AES-256-CTR under a
// key that exists only in memory: no plaintext touches the disk, and a
// scratch file left behind by a crash is noise, deleted at the next start.
// Offsets, sizes and Stat are the plaintext's. Not safe for concurrent use.
type Scratch struct {
	f     *os.File
	block cipher.Block
	iv    [aes.BlockSize]byte
	pos   int64
	buf   []byte // reused by WriteAt: a download writes 32 KiB at a time
}

// NewScratch creates the scratch file at path (mode 0600), failing if it
// exists.
func NewScratch(path string) (*Scratch, error) {
	var key [32]byte
	_, _ = rand.Read(key[:])
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // a path under DATA_DIR/media
	if err != nil {
		return nil, err
	}
	s := &Scratch{f: f, block: block}
	_, _ = rand.Read(s.iv[:])
	return s, nil
}

// xorAt en- or decrypts p, which sits at offset off.
func (s *Scratch) xorAt(p []byte, off int64) {
	var ctr [aes.BlockSize]byte
	// A 128-bit big-endian add of the block number to the IV.
	lo := binary.BigEndian.Uint64(s.iv[8:])
	hi := binary.BigEndian.Uint64(s.iv[:8])
	n := uint64(off) / aes.BlockSize
	sum := lo + n
	if sum < lo {
		hi++
	}
	binary.BigEndian.PutUint64(ctr[8:], sum)
	binary.BigEndian.PutUint64(ctr[:8], hi)
	stream := cipher.NewCTR(s.block, ctr[:])
	if skip := int(off % aes.BlockSize); skip > 0 {
		var waste [aes.BlockSize]byte
		stream.XORKeyStream(waste[:skip], waste[:skip])
	}
	stream.XORKeyStream(p, p)
}

var errNegativeOffset = errors.New("media: negative offset")

// ReadAt reads plaintext at off.
func (s *Scratch) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errNegativeOffset
	}
	n, err := s.f.ReadAt(p, off)
	s.xorAt(p[:n], off)
	return n, err
}

// WriteAt writes plaintext at off; p is left as it was.
func (s *Scratch) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errNegativeOffset
	}
	if cap(s.buf) < len(p) {
		s.buf = make([]byte, len(p))
	}
	buf := s.buf[:len(p)]
	copy(buf, p)
	s.xorAt(buf, off)
	return s.f.WriteAt(buf, off)
}

func (s *Scratch) Read(p []byte) (int, error) {
	n, err := s.ReadAt(p, s.pos)
	s.pos += int64(n)
	if errors.Is(err, io.EOF) && n > 0 {
		err = nil
	}
	return n, err
}

func (s *Scratch) Write(p []byte) (int, error) {
	n, err := s.WriteAt(p, s.pos)
	s.pos += int64(n)
	return n, err
}

// Seek moves the position.
func (s *Scratch) Seek(offset int64, whence int) (int64, error) {
	base := int64(0)
	switch whence {
	case io.SeekCurrent:
		base = s.pos
	case io.SeekEnd:
		fi, err := s.f.Stat()
		if err != nil {
			return 0, err
		}
		base = fi.Size()
	}
	if base+offset < 0 {
		return 0, errors.New("media: seek before the start")
	}
	s.pos = base + offset
	return s.pos, nil
}

// Truncate changes the size.
func (s *Scratch) Truncate(size int64) error { return s.f.Truncate(size) }

// Stat describes the file.
func (s *Scratch) Stat() (os.FileInfo, error) { return s.f.Stat() }

// Close closes the file; Remove deletes it.
func (s *Scratch) Close() error { return s.f.Close() }

// Remove closes and deletes the scratch file.
func (s *Scratch) Remove() {
	_ = s.f.Close()
	_ = os.Remove(s.f.Name())
}
