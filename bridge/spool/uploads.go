package spool

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// UploadTTL is how long an upload can be sent after it was received, by
// default (UPLOAD_RETENTION).
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
	// Retention is how long an upload is kept (UPLOAD_RETENTION);
	// UploadTTL when zero.
	Retention time.Duration
	Log       logr.Logger
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
	if opts.Retention <= 0 {
		opts.Retention = UploadTTL
	}
	return &Uploads{opts: opts}
}

func storeFailed(err error) error {
	return bridge.Internal(bridge.CodeStoreFailed, "the upload could not be stored", err)
}

func readFailed(err error) error {
	return bridge.Internal(bridge.CodeReadFailed, "the uploads could not be read", err)
}

// errUnknownUpload: the id names no upload, or one that expired.
func (u *Uploads) errUnknownUpload() error {
	return bridge.Invalid(bridge.CodeUnknownUpload, "media.upload_id names no upload of the last %s", u.opts.Retention)
}

// ErrUploadNotFound answers DELETE /api/uploads/{id} for an id that names
// no kept upload.
var ErrUploadNotFound = bridge.Errorf(bridge.KindNotFound, bridge.CodeUploadNotFound, "no upload with this id is kept")

// Add keeps f (already in the spool; Uploads owns it from here, and deletes
// it on error) as a new upload. When a kept upload has the same content,
// the new one shares its file and f's is deleted: the same file uploaded
// again takes no more of the spool.
func (u *Uploads) Add(ctx context.Context, f *File) (Upload, error) {
	now := u.opts.Now()
	up := Upload{ID: uuid.NewString(), FileName: f.Name, MimeType: f.MimeType, Size: f.Size,
		CreatedAt: now, ExpiresAt: now.Add(u.opts.Retention)}
	var err error
	if up.SHA256, err = f.Hash(); err != nil {
		_ = os.Remove(f.Path)
		return Upload{}, storeFailed(err)
	}
	path := f.Path
	err = u.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		path = f.Path
		err := tx.QueryRowContext(ctx, `SELECT path FROM uploads WHERE sha256 = ? AND file_size = ? AND expires_at > ? LIMIT 1`,
			up.SHA256, up.Size, now.UnixMilli()).Scan(&path)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO uploads (id, path, file_name, mimetype, file_size, sha256, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, up.ID, path, up.FileName, up.MimeType, up.Size, up.SHA256,
			now.UnixMilli(), up.ExpiresAt.UnixMilli())
		return err
	})
	if err != nil || path != f.Path {
		_ = os.Remove(f.Path)
	}
	if err != nil {
		return Upload{}, storeFailed(err)
	}
	return up, nil
}

// Delete forgets upload id and deletes its file unless another upload
// shares it; ErrUploadNotFound when no such upload is kept. Sends already
// accepted keep their own links.
func (u *Uploads) Delete(ctx context.Context, id string) error {
	var (
		deleted int
		orphans []string
	)
	err := u.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		var err error
		deleted, orphans, err = deleteUploads(ctx, tx, `DELETE FROM uploads WHERE id = ? AND expires_at > ? RETURNING path`, id, u.opts.Now().UnixMilli())
		return err
	})
	if err != nil {
		return storeFailed(err)
	}
	if deleted == 0 {
		return ErrUploadNotFound
	}
	u.remove(orphans)
	return nil
}

// deleteUploads runs a DELETE … RETURNING path: how many uploads it
// deleted, and the paths no upload refers to any more.
func deleteUploads(ctx context.Context, tx *sql.Tx, query string, args ...any) (int, []string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, nil, err
	}
	var paths []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			_ = rows.Close()
			return 0, nil, err
		}
		paths = append(paths, p)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, nil, err
	}
	var orphans []string
	for _, p := range paths {
		var shared bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM uploads WHERE path = ?)`, p).Scan(&shared); err != nil {
			return 0, nil, err
		}
		if !shared && !slices.Contains(orphans, p) {
			orphans = append(orphans, p)
		}
	}
	return len(paths), orphans, nil
}

// remove deletes files after the commit that forgot them: a crash in
// between leaves files the start-up sweep deletes, never a row without its
// file.
func (u *Uploads) remove(paths []string) {
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			u.opts.Log.Error(err, "delete upload")
		}
	}
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
		return nil, u.errUnknownUpload()
	case err != nil:
		return nil, readFailed(err)
	}
	f.Path = filepath.Join(u.opts.Dir, "send-"+uuid.NewString()+".part")
	if err := linkOrCopy(path, f.Path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, u.errUnknownUpload() // expired and swept while we looked
		}
		return nil, bridge.Internal(bridge.CodeSpoolFailed, "the upload could not be prepared for sending", err)
	}
	return &f, nil
}

// Open returns upload id and its file, open for reading (the caller
// closes it); ErrUploadNotFound when no such upload is kept.
func (u *Uploads) Open(ctx context.Context, id string) (Upload, io.ReadSeekCloser, error) {
	var (
		path string
		up   = Upload{ID: id}
	)
	var created, expires int64
	err := u.opts.DB.QueryRowContext(ctx, `SELECT path, file_name, mimetype, file_size, sha256, created_at, expires_at
		FROM uploads WHERE id = ? AND expires_at > ?`, id, u.opts.Now().UnixMilli()).Scan(
		&path, &up.FileName, &up.MimeType, &up.Size, &up.SHA256, &created, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Upload{}, nil, ErrUploadNotFound
	case err != nil:
		return Upload{}, nil, readFailed(err)
	}
	up.CreatedAt, up.ExpiresAt = time.UnixMilli(created), time.UnixMilli(expires)
	f, err := os.Open(path) //nolint:gosec // a path the bridge wrote under its spool
	if errors.Is(err, os.ErrNotExist) {
		return Upload{}, nil, ErrUploadNotFound // expired and swept while we looked
	}
	if err != nil {
		return Upload{}, nil, readFailed(err)
	}
	return up, f, nil
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

// Expire forgets the uploads past their time and deletes the files no
// other upload shares; it returns how many uploads. Sends already accepted
// keep their own links.
func (u *Uploads) Expire(ctx context.Context) (int, error) {
	var (
		n       int
		orphans []string
	)
	err := u.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		var err error
		n, orphans, err = deleteUploads(ctx, tx, `DELETE FROM uploads WHERE expires_at <= ? RETURNING path`, u.opts.Now().UnixMilli())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("expire uploads: %w", err)
	}
	u.remove(orphans)
	return n, nil
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
