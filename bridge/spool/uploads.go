package spool

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// UploadTTL is how long an upload can be sent after it was received.
const UploadTTL = 24 * time.Hour

// uploadSweepEvery is how often Run deletes expired uploads.
const uploadSweepEvery = 10 * time.Minute

// Upload is a file received by POST /api/uploads, to be sent by id.
type Upload struct {
	ID        string
	FileName  string
	MimeType  string
	Size      int64
	SHA256    string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// UploadOptions configures Uploads.
type UploadOptions struct {
	DB      *sql.DB
	Batcher *sqlite.Batcher // DB's one writer
	// Dir is the spool, where uploads and the files of sends live; a send's
	// link to an upload must be on the same file system.
	Dir string
	Now func() time.Time // time.Now when nil
	Log logr.Logger
}

// Uploads keeps uploaded files for UploadTTL. A send of an upload gets its
// own hard link to the file (a copy where links are not supported), which
// the queue deletes when that message is done, like any attachment; the
// upload's own file goes when it expires. So an upload can be sent any
// number of times, and a message still waiting keeps its content after the
// upload expired.
type Uploads struct {
	opts UploadOptions
}

// NewUploads returns the uploads kept in opts.DB.
func NewUploads(opts UploadOptions) *Uploads {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Uploads{opts: opts}
}

func storeFailed(err error) error {
	return bridge.Internal("store_failed", "the upload could not be stored", err)
}

func readFailed(err error) error {
	return bridge.Internal("read_failed", "the uploads could not be read", err)
}

// errUnknownUpload: the id names no upload, or one that expired.
func errUnknownUpload() error {
	return bridge.Invalid("unknown_upload", "media.upload_id names no upload of the last %s", UploadTTL)
}

// Add keeps f (already in the spool; Uploads owns it from here, and deletes
// it on error) as a new upload.
func (u *Uploads) Add(ctx context.Context, f *File) (Upload, error) {
	now := u.opts.Now()
	up := Upload{ID: uuid.NewString(), FileName: f.Name, MimeType: f.MimeType, Size: f.Size, SHA256: f.SHA256,
		CreatedAt: now, ExpiresAt: now.Add(UploadTTL)}
	if up.SHA256 == "" {
		if _, err := f.Hash(); err != nil {
			_ = os.Remove(f.Path)
			return Upload{}, storeFailed(err)
		}
		up.SHA256 = f.SHA256
	}
	err := u.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO uploads (id, path, file_name, mimetype, file_size, sha256, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, up.ID, f.Path, up.FileName, up.MimeType, up.Size, up.SHA256,
			now.UnixMilli(), up.ExpiresAt.UnixMilli())
		return err
	})
	if err != nil {
		_ = os.Remove(f.Path)
		return Upload{}, storeFailed(err)
	}
	return up, nil
}

// Use returns a file of its own for one send of upload id: the caller (the
// queue, once the request is accepted) owns it and deletes it. An unknown
// or expired id is a bridge.Error unknown_upload.
func (u *Uploads) Use(ctx context.Context, id string) (*File, error) {
	var (
		path string
		f    File
	)
	err := u.opts.DB.QueryRowContext(ctx, `SELECT path, file_name, mimetype, file_size, sha256 FROM uploads
		WHERE id = ? AND expires_at > ?`, id, u.opts.Now().UnixMilli()).Scan(&path, &f.Name, &f.MimeType, &f.Size, &f.SHA256)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, errUnknownUpload()
	case err != nil:
		return nil, readFailed(err)
	}
	f.Path = filepath.Join(u.opts.Dir, "send-"+uuid.NewString()+".part")
	if err := linkOrCopy(path, f.Path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errUnknownUpload() // expired and swept while we looked
		}
		return nil, bridge.Internal("spool_failed", "the upload could not be prepared for sending", err)
	}
	return &f, nil
}

// linkOrCopy makes dst a hard link to src, or a copy where the file system
// has no hard links.
func linkOrCopy(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil || errors.Is(err, os.ErrNotExist) {
		return err
	}
	in, err := os.Open(src) //nolint:gosec // a spool path the bridge created
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) //nolint:gosec // a name the bridge made
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err = errors.Join(err, out.Sync(), out.Close()); err != nil {
		_ = os.Remove(dst)
	}
	return err
}

// Expire forgets the uploads past their time and deletes their files; it
// returns how many. Sends already accepted keep their own links.
func (u *Uploads) Expire(ctx context.Context) (int, error) {
	var paths []string
	err := u.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		paths = paths[:0]
		rows, err := tx.QueryContext(ctx, `DELETE FROM uploads WHERE expires_at <= ? RETURNING path`, u.opts.Now().UnixMilli())
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				return err
			}
			paths = append(paths, p)
		}
		return rows.Err()
	})
	if err != nil {
		return 0, fmt.Errorf("expire uploads: %w", err)
	}
	// After the commit: a crash in between leaves files the start-up sweep
	// deletes, never a row without its file.
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			u.opts.Log.Error(err, "delete expired upload")
		}
	}
	return len(paths), nil
}

// Run deletes expired uploads now and every few minutes until ctx ends.
func (u *Uploads) Run(ctx context.Context) error {
	ticker := time.NewTicker(uploadSweepEvery)
	defer ticker.Stop()
	for {
		if _, err := u.Expire(ctx); err != nil && ctx.Err() == nil {
			u.opts.Log.Error(err, "expire uploads")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}
