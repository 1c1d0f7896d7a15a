package spool

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// errSpoolFull and errStorage are the bridge's own faults, retryable: a
// valid attachment it has no room for is never the client's error.
var (
	errSpoolFull = bridge.Errorf(bridge.KindInsufficientStorage, bridge.CodeInsufficientStorage,
		"the bridge's spool for attachments is full; retry later")
	errStorage = bridge.Errorf(bridge.KindInsufficientStorage, bridge.CodeInsufficientStorage,
		"the bridge could not store the attachment; retry later")
)

// storageFailed is the error of a failed write into the spool: any write
// error (ENOSPC, EDQUOT, EIO) is the bridge's disk, never the client.
func storageFailed(err error) error {
	e := *errStorage
	e.Err = err
	return &e
}

// spoolRescanEvery is how old the spool's measured size may be before the
// next reservation measures it again.
const spoolRescanEvery = time.Second

// Space bounds the bytes in the spool directory: every write reserves
// its bytes first and is refused when the spool would exceed max. The size
// is measured from the directory (the queue deletes the files it sent, the
// session spools downloads) at most once per spoolRescanEvery; bytes
// reserved since the last measure are added to it.
type Space struct {
	dir string
	max int64 // 0: unbounded

	mu        sync.Mutex
	measured  int64
	pending   int64
	measureAt time.Time
}

// reserve accounts for n more bytes, or returns errSpoolFull.
func (s *Space) reserve(n int64) error {
	if s.max <= 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if now.After(s.measureAt) {
		s.measured, s.pending, s.measureAt = Bytes(s.dir), 0, now.Add(spoolRescanEvery)
	}
	if s.measured+s.pending+n > s.max {
		// Measure again before refusing: files deleted since (a sent
		// attachment, a deleted or deduplicated upload) give their room
		// back at once.
		s.measured, s.pending, s.measureAt = Bytes(s.dir), 0, now.Add(spoolRescanEvery)
		if s.measured+n > s.max {
			return errSpoolFull
		}
	}
	s.pending += n
	return nil
}

// Bytes is the size of the regular files directly in dir, each file
// once: the sends of an upload are hard links to its one file.
func Bytes(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var total int64
	seen := map[uint64]bool{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			if seen[st.Ino] {
				continue
			}
			seen[st.Ino] = true
		}
		total += info.Size()
	}
	return total
}

// spoolWriter writes a spooled file: each write is reserved in the space
// first and hashed after.
type spoolWriter struct {
	out   *os.File
	space *Space
	sum   hash.Hash
}

func (w *spoolWriter) Write(p []byte) (int, error) {
	if err := w.space.reserve(int64(len(p))); err != nil {
		return 0, err
	}
	n, err := w.out.Write(p)
	w.sum.Write(p[:n])
	if err != nil {
		return n, storageFailed(err)
	}
	return n, nil
}

// Write copies one file (a multipart part) named name to a new file in the
// spool, stopping (413) as soon as it exceeds maxFile, sniffs its type from
// its first bytes and hashes it. A failure to read r is a *ReadError; the
// returned file, even with an error, is the caller's to delete.
func (s *Space) Write(r io.Reader, name string, maxFile int64) (*File, error) {
	if err := s.reserve(0); err != nil {
		return nil, err // full already: not even an empty file
	}
	out, err := os.CreateTemp(s.dir, "send-*.part") //nolint:gosec // dir is DATA_DIR/spool; the name is random
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
			return nil, storageFailed(err)
		}
		return nil, spoolFailed(err)
	}
	sf := &File{Path: out.Name(), Name: name}
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		_ = out.Close()
		return sf, &ReadError{Err: err}
	}
	head = head[:n]
	w := &spoolWriter{out: out, space: s, sum: sha256.New()}
	sf.Size, err = io.Copy(w, io.MultiReader(strings.NewReader(string(head)), io.LimitReader(r, maxFile+1-int64(n))))
	if err != nil {
		_ = out.Close()
		if bridge.ErrorKind(err) == bridge.KindInsufficientStorage {
			return sf, err
		}
		return sf, &ReadError{Err: err}
	}
	if sf.Size > maxFile {
		_ = out.Close()
		return sf, bridge.Errorf(bridge.KindTooLarge, bridge.CodeFileTooLarge, "each file must be at most %d bytes (MAX_FILE_SIZE)", maxFile)
	}
	// Durable before the message that refers to it is committed; a full
	// disk may only show here.
	if err := errors.Join(out.Sync(), out.Close()); err != nil {
		return sf, storageFailed(err)
	}
	sf.MimeType = SniffType(head, sf.Name)
	sf.SHA256 = hex.EncodeToString(w.sum.Sum(nil))
	return sf, nil
}

// NewSpace bounds dir to max bytes (0: unbounded).
func NewSpace(dir string, max int64) *Space {
	return &Space{dir: filepath.Clean(dir), max: max}
}

// sniffLen is what http.DetectContentType reads.
const sniffLen = 512

// ReadError is a failure to read the file being spooled: the client's
// body, not the bridge's disk.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return "read the upload: " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

func spoolFailed(err error) error {
	return bridge.Internal(bridge.CodeSpoolFailed, "the attachment could not be stored", err)
}
