// Package sqlite opens the bridge's encrypted SQLite databases
// and migrates their schemas.
//
// Every file is encrypted at rest with the adiantum VFS of
// github.com/ncruces/go-sqlite3, which runs SQLite as pure Go (no cgo, so the
// image stays static). Adiantum is deterministic for a given key, so each
// database gets its own key, derived from ENCRYPTION_KEY with HKDF and the
// database's purpose: equal pages in two files never look equal on disk.
package sqlite

import (
	"context"
	"crypto/hkdf"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"
	_ "github.com/ncruces/go-sqlite3/vfs/adiantum" // registers the "adiantum" VFS
)

// ErrWrongKey means the file exists but does not decrypt with the key given:
// it was written with another ENCRYPTION_KEY, or it is not a msgbridge
// database. Nothing in it was changed.
var ErrWrongKey = errors.New("the file does not decrypt with ENCRYPTION_KEY (written with another key, or not a msgbridge database); nothing was changed")

// MasterKeyLen is the length of ENCRYPTION_KEY once hex-decoded.
const MasterKeyLen = 32

// fileMode: only the bridge's user reads the databases (encrypted, but the
// files say when messages came and went). SQLite's own default is 0644.
const fileMode = 0o600

// busyTimeoutMillis lets a writer wait for another connection's transaction
// instead of failing with SQLITE_BUSY.
const busyTimeoutMillis = 10_000

// idleConnLifetime is how long a pooled connection may sit unused before it
// is closed. Each connection is its own SQLite engine (its memory, page cache
// and parsed schema: about 300 KiB resident), and database/sql keeps two idle
// by default, so an idle bridge held one more engine for bridge.db than its
// periodic work uses. A connection used within the period stays open (the
// pool hands out the most recently used one first), so a busy bridge keeps
// its connections; one that is closed costs about 2 ms to open again.
var idleConnLifetime = time.Minute

// maxIdleConns is how many connections the pool keeps between uses.
// database/sql's default is two: under concurrent requests (16 clients
// each reading the queue once its send is stored) it opened a connection
// for each read beyond two and closed it right after, and each open paid
// for the key, the pragmas and a parse of the schema again (a fifth of the
// bridge's CPU at 16 clients, issue 47). The pool opens as many as are
// used at once either way, so keeping them raises no peak; idle ones still
// close after idleConnLifetime, so an idle bridge keeps none of them.
const maxIdleConns = 64

// Open opens the database at path, creating it when absent, encrypted with a
// key derived from masterKey for purpose (for example "bridge" or
// "credentials"; a file must always be opened with the same purpose).
//
// The key is set in each connection's init callback rather than in the DSN,
// so it never appears in a driver error or a log line. A file that does not
// decrypt gives ErrWrongKey and is left as it was.
func Open(ctx context.Context, path string, masterKey []byte, purpose string) (*sql.DB, error) {
	return open(ctx, path, masterKey, purpose, "FULL")
}

// OpenSyncedByCaller is Open with synchronous=NORMAL: a commit writes its
// pages to the write-ahead log without an fsync, and the caller makes a
// group of commits durable at once with SyncWAL before it relies on them.
// Commits stay atomic and in order (WAL): an operating system crash or a
// power loss can lose the commits after the last SyncWAL, never corrupt the
// file; a crash of the process loses nothing, the pages being in the
// operating system's cache. session.db, whose every decrypted message is a
// transaction, is opened so (docs/design/20261128-incoming-throughput.md).
func OpenSyncedByCaller(ctx context.Context, path string, masterKey []byte, purpose string) (*sql.DB, error) {
	return open(ctx, path, masterKey, purpose, "NORMAL")
}

// SyncWAL makes every commit to the database at path so far durable: it
// fsyncs its write-ahead log (path-wal), which holds them until a
// checkpoint copies them into the file (SQLite fsyncs the log before it
// does). fsync flushes the file, whatever descriptor it is called on. No
// log file means no commit waits in one.
func SyncWAL(path string) error {
	f, err := os.OpenFile(path+"-wal", os.O_RDWR, 0) //nolint:gosec // DATA_DIR's own file
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sync %s-wal: %w", path, err)
	}
	syncErr := f.Sync()
	if err := f.Close(); syncErr == nil && err != nil {
		syncErr = err
	}
	if syncErr != nil {
		return fmt.Errorf("sync %s-wal: %w", path, syncErr)
	}
	return nil
}

func open(ctx context.Context, path string, masterKey []byte, purpose, synchronous string) (*sql.DB, error) {
	if len(masterKey) != MasterKeyLen {
		return nil, fmt.Errorf("open %s: master key must be %d bytes, got %d", path, MasterKeyLen, len(masterKey))
	}
	fileKey, err := hkdf.Key(sha256.New, masterKey, nil, "msgbridge sqlite "+purpose, 32)
	if err != nil {
		return nil, fmt.Errorf("open %s: derive key: %w", path, err)
	}
	existed := fileExists(path)
	if !existed {
		// Created here, private, before SQLite would create it 0644; SQLite
		// takes an empty file for a new database.
		if err := createPrivate(path); err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}

	hexKey := hex.EncodeToString(fileKey)
	// _txlock=immediate: a write transaction takes the write lock at BEGIN,
	// so two writers queue on busy_timeout instead of failing to upgrade.
	// modeof: the -wal and -journal files SQLite creates take the
	// database's mode. The path is escaped: a URI takes ? # % literally.
	dsn := "file:" + uriEscape(path) + "?vfs=adiantum&_txlock=immediate&modeof=" + uriEscape(path)
	db, err := driver.Open(dsn, func(c *sqlite3.Conn) error {
		// The key first: every later statement reads the file.
		if err := c.Exec("PRAGMA hexkey='" + hexKey + "'"); err != nil {
			return err
		}
		if err := c.Exec(fmt.Sprintf(
			"PRAGMA busy_timeout=%d; PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY; PRAGMA journal_mode=WAL; PRAGMA synchronous=%s;",
			busyTimeoutMillis, synchronous)); err != nil {
			return err
		}
		// WAL mode has created the shared-memory index if no connection
		// held it; SQLite creates it 0644 whatever modeof says.
		return chmodIfExists(path+"-shm", fileMode)
	})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetConnMaxIdleTime(idleConnLifetime)
	db.SetMaxIdleConns(maxIdleConns)
	// Reading the schema is the first read of page 1: a wrong key fails here.
	if _, err := db.ExecContext(ctx, "SELECT count(*) FROM sqlite_master"); err != nil {
		_ = db.Close()
		if existed && errors.Is(err, sqlite3.NOTADB) {
			return nil, fmt.Errorf("open %s: %w", path, ErrWrongKey)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Once the key is known right, files an older version created 0644 are
	// tightened.
	for _, f := range []string{path, path + "-wal"} {
		if err := chmodIfExists(f, fileMode); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}
	return db, nil
}

func chmodIfExists(path string, mode os.FileMode) error {
	if err := os.Chmod(path, mode); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// createPrivate creates path empty with fileMode unless it exists.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, fileMode) //nolint:gosec // DATA_DIR's own files
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// uriEscape percent-encodes s for a SQLite URI filename (its path or a
// query value), which decodes %HH and ends at ? or # and a value at &.
func uriEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '/' || c == '.' || c == '-' || c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Verify checks that the existing database at path decrypts with the key for
// purpose, changing nothing in it (a wrong key fails at the first read, and a
// right one only opens and closes it); an absent file passes. Start-up verifies
// every database before opening any, so that a wrong ENCRYPTION_KEY cannot
// create one file and then fail on the next.
func Verify(ctx context.Context, path string, masterKey []byte, purpose string) error {
	if !fileExists(path) {
		return nil
	}
	db, err := Open(ctx, path, masterKey, purpose)
	if err != nil {
		return err
	}
	return db.Close()
}

// IsDiskFull reports an error of a write that found no space left on the
// disk (SQLITE_FULL, or the file system's ENOSPC).
func IsDiskFull(err error) bool {
	return errors.Is(err, sqlite3.FULL) || errors.Is(err, syscall.ENOSPC)
}
