// Package spool is the bridge's room for files on their way out: the
// bounded spool directory (DATA_DIR/spool) that request bodies are
// streamed into, the sniffing that names a file by its content, and the
// uploads of POST /api/uploads kept for sending by id.
package spool

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
)

// File is an attachment received into the spool. The queue owns it once
// the request that carries it is accepted, and deletes it when its
// message is done.
type File struct {
	Path     string
	Name     string
	MimeType string
	Size     int64
	// SHA256 is the hex SHA-256 of the file's content. Write fills it for
	// free while spooling; when it is empty Hash reads the file.
	SHA256 string
}

// Discard deletes the file from the spool, when a request that carried it
// was refused; a nil File has nothing to delete.
func (f *File) Discard() {
	if f != nil {
		_ = os.Remove(f.Path)
	}
}

// Hash is f.SHA256, computed from the file (and kept) when it is empty.
func (f *File) Hash() (string, error) {
	if f.SHA256 != "" {
		return f.SHA256, nil
	}
	file, err := os.Open(f.Path)
	if err != nil {
		return "", err
	}
	defer func() { _ = file.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, file); err != nil {
		return "", err
	}
	f.SHA256 = hex.EncodeToString(h.Sum(nil))
	return f.SHA256, nil
}
