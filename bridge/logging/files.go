package logging

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// deletionCheckInterval is how often an open log file is compared with the
// file at its path (one stat; BenchmarkLogLines puts it at 2-3 µs, which on
// every line would halve the throughput and once a second costs nothing).
// A file deleted or replaced behind the bridge's back is reopened within
// this interval; deletions through Files.Remove take effect at once.
const deletionCheckInterval = time.Second

// fileMode: log lines can name accounts and numbers, so only the bridge's
// own user reads them.
const fileMode = 0o600

// levels is every level in file order, for Close.
var levels = [...]Level{LevelDebug, LevelInfo, LevelWarn, LevelError}

// rotatedSuffix ends the name of a day's file that reached its bound and
// was set aside for a new one: 2026-11-21.info.1.log.
const rotatedSuffix = ".1.log"

// rotatedName is the name of name's part set aside within its day.
func rotatedName(name string) string {
	return strings.TrimSuffix(name, ".log") + rotatedSuffix
}

// FileName is the name of the log file of level for the UTC day of day:
// 2026-11-21.info.log. Both parts come from typed values, never from a
// request's text, so the name cannot hold a path separator.
func FileName(day time.Time, level Level) string {
	return day.UTC().Format(time.DateOnly) + "." + level.String() + ".log"
}

// Files is where the lines go: stdout, and with a directory one file per UTC
// day and level. Every write holds one mutex, so lines from concurrent
// loggers never interleave and none is lost; a line is one write(2) on
// each destination.
type Files struct {
	mu            sync.Mutex
	stdout        io.Writer
	dir           string // empty: stdout only
	now           func() time.Time
	checkInterval time.Duration
	open          [len(levels)]*dayFile
	closed        bool
	lastErrReport time.Time
	// maxBytes bounds the files of dir together (LOG_FILES_MAX_BYTES; 0:
	// no bound); a file is set aside within its day at maxFileBytes.
	maxBytes, maxFileBytes int64
}

// dayFile is one open log file.
type dayFile struct {
	f         *os.File
	path      string
	day       int64       // days since the Unix epoch (UTC)
	info      os.FileInfo // of f when opened, to detect a replaced file
	checkedAt time.Time
	size      int64
}

// filesPerBound is how many files' bound makes maxBytes: four levels, each
// a day's file and its part set aside, and as much again for the days
// before, which are deleted oldest first to keep within maxBytes.
const filesPerBound = 16

func newFiles(stdout io.Writer, dir string, now func() time.Time, maxBytes int64) (*Files, error) {
	if dir != "" {
		// DATA_DIR/logs is the operator's own setting, not request input.
		if err := os.MkdirAll(dir, 0o700); err != nil { //nolint:gosec // see above
			return nil, fmt.Errorf("log directory: %w", err)
		}
	}
	return &Files{stdout: stdout, dir: dir, now: now, checkInterval: deletionCheckInterval,
		maxBytes: maxBytes, maxFileBytes: maxBytes / filesPerBound}, nil
}

// epochDay is t's UTC day as a number: comparing two is cheaper than
// formatting dates on every line.
func epochDay(t time.Time) int64 {
	s := t.Unix()
	if s < 0 {
		return (s+1)/86400 - 1
	}
	return s / 86400
}

// write sends one line (ending in a newline) to stdout and to the file of
// its level for the day of at.
func (o *Files) write(level Level, at time.Time, line []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stdout != nil {
		_, _ = o.stdout.Write(line) // stdout failing leaves nowhere to report it
	}
	if o.dir == "" || o.closed {
		return
	}
	df, err := o.fileFor(level, at)
	if err == nil && o.maxFileBytes > 0 && df.size > 0 && df.size+int64(len(line)) > o.maxFileBytes {
		df, err = o.rotateLocked(level, at)
	}
	if err == nil {
		var n int
		n, err = df.f.Write(line)
		df.size += int64(n)
	}
	if err != nil {
		o.reportLocked(at, err)
	}
}

// rotateLocked sets level's full file aside within its day (replacing the
// part set aside before, so a day holds two parts a level at most), keeps
// the directory within maxBytes and opens a new file.
func (o *Files) rotateLocked(level Level, at time.Time) (*dayFile, error) {
	path := o.open[level].path
	o.closeLocked(level)
	if err := os.Rename(path, rotatedName(path)); err != nil {
		return nil, err
	}
	return o.fileFor(level, at) // a new file: fileFor makes room
}

// pruneLocked deletes the oldest log files, never an open one, until the
// directory holds at most maxBytes once the open files reached their
// bound: the logs never drive the bridge into disk_full, whatever writes
// them.
func (o *Files) pruneLocked() {
	if o.maxBytes <= 0 {
		return
	}
	entries, err := os.ReadDir(o.dir)
	if err != nil {
		return
	}
	type logFile struct {
		path string
		info fs.FileInfo
	}
	var all []logFile
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		all = append(all, logFile{filepath.Join(o.dir, e.Name()), info})
		total += info.Size()
	}
	// Oldest first: by the last write, then by name (the day comes first).
	slices.SortFunc(all, func(a, b logFile) int {
		if c := a.info.ModTime().Compare(b.info.ModTime()); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	// The open files grow until they are set aside: room for that.
	limit := o.maxBytes
	for _, df := range o.open {
		if df != nil {
			limit -= max(0, o.maxFileBytes-df.size)
		}
	}
	for _, f := range all {
		if total <= limit {
			return
		}
		if o.isOpenLocked(f.path) {
			continue
		}
		if os.Remove(f.path) == nil {
			total -= f.info.Size()
		}
	}
}

func (o *Files) isOpenLocked(path string) bool {
	for _, df := range o.open {
		if df != nil && df.path == path {
			return true
		}
	}
	return false
}

// fileFor returns the open file of level for at's day, switching to a new
// file at UTC midnight and reopening one that was deleted or replaced.
func (o *Files) fileFor(level Level, at time.Time) (*dayFile, error) {
	day := epochDay(at)
	df := o.open[level]
	if df != nil && df.day == day && at.Sub(df.checkedAt) < o.checkInterval && !at.Before(df.checkedAt) {
		return df, nil
	}
	if df != nil && df.day == day {
		df.checkedAt = at
		if fi, err := os.Stat(df.path); err == nil && os.SameFile(fi, df.info) {
			return df, nil
		}
		// Deleted (a purge, an rm) or replaced: the next line starts anew.
	}
	o.closeLocked(level)
	path := filepath.Join(o.dir, FileName(at, level))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, fileMode) //nolint:gosec // path from a date and a level
	if err != nil {
		return nil, err
	}
	// O_CREATE's mode only applies to a new file; an older one is narrowed.
	if err := f.Chmod(fileMode); err != nil {
		_ = f.Close()
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	df = &dayFile{f: f, path: path, day: day, info: fi, checkedAt: at, size: fi.Size()}
	o.open[level] = df
	if fi.Size() == 0 {
		o.pruneLocked() // a new day's file: the days before make room
	}
	return df, nil
}

// reportLocked tells stdout that a file could not be written, at most once a
// minute, since the file log cannot carry news of its own failure.
func (o *Files) reportLocked(at time.Time, err error) {
	if o.stdout == nil || (!o.lastErrReport.IsZero() && at.Sub(o.lastErrReport) < time.Minute) {
		return
	}
	o.lastErrReport = at
	b := []byte(`{"ts":`)
	b = appendString(b, at.UTC().Format(bridge.TimeLayout))
	b = append(b, `,"level":"error","logger":"logging","msg":"cannot write the log file","error":`...)
	b = appendString(b, err.Error())
	_, _ = o.stdout.Write(append(b, "}\n"...))
}

func (o *Files) closeLocked(level Level) {
	if df := o.open[level]; df != nil {
		_ = df.f.Close()
		o.open[level] = nil
	}
}

// Remove deletes the log file of level for day's UTC date. A file still
// being written is closed first, so the next line recreates it at once. An
// absent file gives an error matching fs.ErrNotExist.
func (o *Files) Remove(day time.Time, level Level) error {
	if int(level) < 0 || int(level) >= len(levels) {
		return fmt.Errorf("remove log file: unknown level %d", int(level))
	}
	if o.dir == "" {
		return fmt.Errorf("remove log file: file logging is off: %w", fs.ErrNotExist)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	path := filepath.Join(o.dir, FileName(day, level))
	if df := o.open[level]; df != nil && df.path == path {
		o.closeLocked(level)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove log file: %w", err)
	}
	// The part set aside within the day goes with it; most days have none.
	if err := os.Remove(rotatedName(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove log file: %w", err)
	}
	return nil
}

// Close closes the files; later lines go to stdout only.
func (o *Files) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	var errs []error
	for _, l := range levels {
		if df := o.open[l]; df != nil {
			errs = append(errs, df.f.Close())
			o.open[l] = nil
		}
	}
	return errors.Join(errs...)
}
