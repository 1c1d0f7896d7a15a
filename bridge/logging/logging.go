// Package logging is the bridge's one log sink: JSON
// lines through github.com/go-logr/logr, written to stdout (what kubectl logs
// shows) and to DATA_DIR/logs/YYYY-MM-DD.<level>.log, one file per UTC day
// and level, which an admin can purge (DELETE /api/admin/logs).
//
// Levels. logr has V-levels and errors only, so:
//
//	log.Error(err, msg, kv...)             -> error
//	logging.Warn(log, msg, kv...)          -> warn  (= log.Info(msg, "level", "warn", kv...))
//	log.Info(msg, kv...)                   -> info
//	log.V(1).Info(msg, kv...)              -> debug (any V >= 1), only at LOG_LEVEL=debug
//
// The "level"="warn" key is the convention bridge/session already follows
// (walog.go maps whatsmeow's Warnf to it); the sink consumes the key and
// writes the line at warn level, to the warn file.
//
// A line:
//
//	{"ts":"2026-11-21T10:00:00.000Z","level":"info","logger":"session.whatsmeow","msg":"…","key":"value","error":"…"}
//
// Secrets: values implementing logr.Marshaler are asked for their log form
// at every depth (bridge.Secret gives "[redacted]"); as a safety net, the
// values of keys and struct fields named like credentials (apiKey, token,
// secret, password, authorization, encryptionKey, pairingCode, …), of
// message bodies ("text", "body", "caption") and of "qr" are written as
// "[redacted]"; []byte values are written as their length only.
package logging

import (
	"io"
	"time"

	"github.com/go-logr/logr"
)

// Options configure New.
type Options struct {
	// Stdout receives every line; nil writes to no stream (files only).
	Stdout io.Writer
	// Dir holds the daily files (datadir's LogsDir); empty: stdout only.
	Dir string
	// Level is the lowest level written (LOG_LEVEL).
	Level Level
	// Now is the clock for timestamps and file days; time.Now when nil.
	Now func() time.Time
	// MaxBytes bounds the files in Dir together (LOG_FILES_MAX_BYTES): a
	// day's file is set aside within the day at a sixteenth of it, and the
	// oldest files are deleted to keep within it. 0: no bound.
	MaxBytes int64
}

// New returns the logger and the Files it writes to. Close the Files when the
// process ends; their Remove method is what the log purge endpoint calls, so
// that a purged file still being written is recreated by the next line.
func New(opts Options) (logr.Logger, *Files, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	files, err := newFiles(opts.Stdout, opts.Dir, opts.Now, opts.MaxBytes)
	if err != nil {
		return logr.Discard(), nil, err
	}
	return logr.New(&sink{out: files, min: opts.Level, now: opts.Now}), files, nil
}

// Warn logs msg at warn level: an Info line with "level"="warn", which the
// sink writes as a warn line to the warn file.
func Warn(log logr.Logger, msg string, kv ...any) {
	log.WithCallDepth(1).Info(msg, append([]any{levelKey, warnValue}, kv...)...)
}
