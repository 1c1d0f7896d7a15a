// Package media keeps incoming attachments encrypted at rest under
// DATA_DIR/media. A file is AES-256-CTR under a key derived from
// ENCRYPTION_KEY with a random IV per file in its header: CTR can be read
// and written at any offset, which both whatsmeow's in-place download (it
// writes the ciphertext, checks its MAC, then decrypts in place) and Range
// requests need, and no plaintext ever touches the disk.
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
	"io/fs"
	"os"
	"time"
)

// magic starts every sealed file; its version is the last byte.
var magic = [4]byte{'M', 'B', 'M', '1'}

const headerLen = len(magic) + aes.BlockSize

// DeriveKey is the media files' key from the decoded ENCRYPTION_KEY.
func DeriveKey(masterKey []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, masterKey, nil, "msgbridge media", 32)
}

// Sealed is an encrypted file read and written as its plaintext: offsets,
// sizes and Stat are the plaintext's. It is not safe for concurrent use.
type Sealed struct {
	f     *os.File
	block cipher.Block
	iv    [aes.BlockSize]byte
	pos   int64
}

// Create makes a new sealed file at path (mode 0600), failing if it exists.
func Create(path string, key []byte) (*Sealed, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // a path under DATA_DIR/media
	if err != nil {
		return nil, err
	}
	s, err := newSealed(f, key)
	if err == nil {
		_, err = rand.Read(s.iv[:])
	}
	if err == nil {
		_, err = f.Write(append(magic[:], s.iv[:]...))
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, err
	}
	return s, nil
}

// ErrCorrupt: a file that is not a sealed file.
var ErrCorrupt = errors.New("media: not a sealed file")

// Open opens a sealed file for reading.
func Open(path string, key []byte) (*Sealed, error) {
	f, err := os.Open(path) //nolint:gosec // a path under DATA_DIR/media
	if err != nil {
		return nil, err
	}
	s, err := newSealed(f, key)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	var head [headerLen]byte
	if _, err := io.ReadFull(f, head[:]); err != nil || [4]byte(head[:4]) != magic {
		_ = f.Close()
		return nil, ErrCorrupt
	}
	copy(s.iv[:], head[4:])
	return s, nil
}

func newSealed(f *os.File, key []byte) (*Sealed, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("media key: %w", err)
	}
	return &Sealed{f: f, block: block}, nil
}

// xorAt en- or decrypts p, which sits at plaintext offset off.
func (s *Sealed) xorAt(p []byte, off int64) {
	var ctr [aes.BlockSize]byte
	copy(ctr[:], s.iv[:])
	// A 128-bit big-endian add of the block number to the IV.
	lo := binary.BigEndian.Uint64(ctr[8:])
	hi := binary.BigEndian.Uint64(ctr[:8])
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

// ReadAt reads plaintext at off.
func (s *Sealed) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("media: negative offset")
	}
	n, err := s.f.ReadAt(p, off+int64(headerLen))
	s.xorAt(p[:n], off)
	return n, err
}

// WriteAt writes plaintext at off; p is left as it was.
func (s *Sealed) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("media: negative offset")
	}
	buf := make([]byte, len(p))
	copy(buf, p)
	s.xorAt(buf, off)
	return s.f.WriteAt(buf, off+int64(headerLen))
}

func (s *Sealed) Read(p []byte) (int, error) {
	n, err := s.ReadAt(p, s.pos)
	s.pos += int64(n)
	if errors.Is(err, io.EOF) && n > 0 {
		err = nil
	}
	return n, err
}

func (s *Sealed) Write(p []byte) (int, error) {
	n, err := s.WriteAt(p, s.pos)
	s.pos += int64(n)
	return n, err
}

// Seek moves the plaintext position.
func (s *Sealed) Seek(offset int64, whence int) (int64, error) {
	base := int64(0)
	switch whence {
	case io.SeekCurrent:
		base = s.pos
	case io.SeekEnd:
		size, err := s.size()
		if err != nil {
			return 0, err
		}
		base = size
	}
	if base+offset < 0 {
		return 0, errors.New("media: seek before the start")
	}
	s.pos = base + offset
	return s.pos, nil
}

func (s *Sealed) size() (int64, error) {
	fi, err := s.f.Stat()
	if err != nil {
		return 0, err
	}
	return max(fi.Size()-int64(headerLen), 0), nil
}

// Truncate changes the plaintext size.
func (s *Sealed) Truncate(size int64) error { return s.f.Truncate(size + int64(headerLen)) }

// Stat describes the file with its plaintext size.
func (s *Sealed) Stat() (os.FileInfo, error) {
	fi, err := s.f.Stat()
	if err != nil {
		return nil, err
	}
	return plainInfo{fi, max(fi.Size()-int64(headerLen), 0)}, nil
}

// Sync flushes the file to disk.
func (s *Sealed) Sync() error { return s.f.Sync() }

// Close closes the file.
func (s *Sealed) Close() error { return s.f.Close() }

type plainInfo struct {
	fs.FileInfo
	size int64
}

func (p plainInfo) Size() int64        { return p.size }
func (p plainInfo) ModTime() time.Time { return p.FileInfo.ModTime() }
