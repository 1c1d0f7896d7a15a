// Package datadir lays out DATA_DIR and makes sure one
// bridge process at a time uses it.
//
//	credentials/session.db   whatsmeow's store; wiped by logout
//	bridge.db                message log, queues, session state
//	audit/2026-W47.db        weekly audit databases
//	logs/2026-11-21.info.log daily log files
//	spool/                   attachments being received
//	media/                   incoming attachments, sealed (encrypted)
package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is an open, locked DATA_DIR.
type Dir struct {
	root string
	lock *os.File
}

// lockName is the file whose flock marks the directory as in use. Its
// content is the holder's PID, for the error a second process prints.
const lockName = "bridge.lock"

// dirMode: the folders hold credentials, messages and logs.
const dirMode = 0o700

// ErrLocked means another process holds DATA_DIR.
var ErrLocked = errors.New("another bridge process is using this DATA_DIR")

// Open creates root and its folders (mode 0700: they hold credentials) and
// takes an exclusive lock on it, held until Close or the process ends, so
// that a second bridge on the same credentials exits instead of fighting the
// first one for the WhatsApp session ('Conflict' errors, stream replaced).
func Open(root string) (*Dir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("data dir %s: %w", root, err)
	}
	// DATA_DIR is the operator's own setting, not request input.
	if err := os.MkdirAll(abs, dirMode); err != nil { //nolint:gosec // see above
		return nil, fmt.Errorf("data dir: %w", err)
	}
	// An existing DATA_DIR may be a volume's root, which the bridge's user
	// does not own (Kubernetes: root with the pod's fsGroup) and cannot
	// chmod; its own folders below are what must be private.
	if err := os.Chmod(abs, dirMode); err != nil && !errors.Is(err, fs.ErrPermission) { //nolint:gosec // DATA_DIR is the operator's own setting, not request input
		return nil, fmt.Errorf("data dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(abs, lockName), os.O_RDWR|os.O_CREATE, 0o600) //nolint:gosec // as above
	if err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	// flock locks are released by the kernel when the process dies, kill -9
	// included, so a crash never leaves a stale lock behind.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := readHolder(f)
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s, held by PID %s); stop it first", ErrLocked, abs, holder)
		}
		return nil, fmt.Errorf("data dir lock %s: %w", abs, err)
	}
	if err := writeHolder(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	d := &Dir{root: abs, lock: f}
	if err := d.makePrivateDirs(); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("data dir: %w", err)
	}
	return d, nil
}

// makePrivateDirs creates the folders, or tightens them when an older
// version or a hand made them wider: MkdirAll leaves an existing mode be.
func (d *Dir) makePrivateDirs() error {
	for _, sub := range []string{d.CredentialsDir(), d.AuditDir(), d.LogsDir(), d.SpoolDir(), d.MediaDir()} {
		if err := os.MkdirAll(sub, dirMode); err != nil {
			return err
		}
		if err := os.Chmod(sub, dirMode); err != nil {
			return err
		}
	}
	return nil
}

func readHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid := strings.TrimSpace(string(b[:n]))
	if _, err := strconv.Atoi(pid); err != nil {
		return "unknown"
	}
	return pid
}

func writeHolder(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// Close releases the lock.
func (d *Dir) Close() error {
	return d.lock.Close()
}

// Root is the absolute DATA_DIR.
func (d *Dir) Root() string { return d.root }

// CredentialsDir holds whatsmeow's store; logout wipes it.
func (d *Dir) CredentialsDir() string { return filepath.Join(d.root, "credentials") }

// SessionDB is whatsmeow's encrypted store.
func (d *Dir) SessionDB() string { return filepath.Join(d.CredentialsDir(), "session.db") }

// BridgeDB holds the message log, the queues and the session state.
func (d *Dir) BridgeDB() string { return filepath.Join(d.root, "bridge.db") }

// AuditDir holds the weekly audit databases.
func (d *Dir) AuditDir() string { return filepath.Join(d.root, "audit") }

// LogsDir holds the daily log files.
func (d *Dir) LogsDir() string { return filepath.Join(d.root, "logs") }

// SpoolDir holds attachments while they are received and sent.
func (d *Dir) SpoolDir() string { return filepath.Join(d.root, "spool") }

// MediaDir holds incoming attachments, sealed.
func (d *Dir) MediaDir() string { return filepath.Join(d.root, "media") }
