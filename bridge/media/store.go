package media

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/durable"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// The states of a media row.
const (
	statePending = "pending" // to be downloaded (again) at next_attempt_at
	stateDone    = "done"    // the sealed file is in DATA_DIR/media
	stateFailed  = "failed"  // will not be downloaded; error says why
)

// Store is the media table of bridge.db: what was received, what is
// downloaded, what expires when.
type Store struct {
	db        *sql.DB
	batcher   *sqlite.Batcher
	stmts     *sqlite.Statements
	retention time.Duration
	now       func() time.Time
	// registered is signalled by Register; the Downloader waits on it.
	registered *durable.Signal
}

// NewStore returns the media table of db, whose one writer is batcher;
// media is kept for retention after it was received.
func NewStore(db *sql.DB, batcher *sqlite.Batcher, retention time.Duration, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, batcher: batcher, stmts: sqlite.NewStatements(db), retention: retention, now: now,
		registered: durable.NewSignal()}
}

const (
	insertMedia = `INSERT INTO media (id, chat, whatsapp_id, mimetype, file_name, size, sha256, source, next_attempt_at,
		created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chat, whatsapp_id) DO NOTHING`
	mediaOfMessage = `SELECT id FROM media WHERE chat = ? AND whatsapp_id = ?`
)

// Register gives in's attachment, if it has one, its media id (in.Media.ID)
// and records it as pending in tx, the transaction that stores the message
// and its event: the media exists exactly when the message does. A
// message delivered again keeps the id it was given the first time. A
// message is known by its chat and id, as in the incoming history: senders
// choose ids, so the same id in another chat is another message, never a
// way to another chat's file.
func (s *Store) Register(ctx context.Context, tx *sql.Tx, in *bridge.Incoming) error {
	m := in.Media
	if m == nil {
		return nil
	}
	now := s.now().UnixMilli()
	size := int64(min(m.Size, 1<<62)) //nolint:gosec // bounded above
	if _, err := s.stmts.Exec(ctx, tx, insertMedia, NewID(), in.Chat.String(), in.WhatsAppID, m.MimeType, m.FileName, size, m.SHA256,
		m.Source, now, now, now+s.retention.Milliseconds()); err != nil {
		return fmt.Errorf("register media: %w", err)
	}
	if err := s.stmts.QueryRow(ctx, tx, mediaOfMessage, in.Chat.String(), in.WhatsAppID).Scan(&m.ID); err != nil {
		return fmt.Errorf("register media: %w", err)
	}
	s.registered.Notify()
	return nil
}

// record is one media row.
type record struct {
	id, mimeType, fileName, sha256, state, err string
	chat                                       string
	size                                       int64
	source                                     []byte
	attempts                                   int
	nextAttemptAt, createdAt, expiresAt        int64
}

// expired: past its expires_at, or older than the retention now set (a
// shortened MEDIA_RETENTION applies to what is already stored).
func (s *Store) expired(r record, now time.Time) bool {
	n := now.UnixMilli()
	return r.expiresAt <= n || r.createdAt+s.retention.Milliseconds() <= n
}

const selectMedia = `SELECT id, mimetype, file_name, sha256, state, error, size, source, attempts, next_attempt_at,
	created_at, expires_at, chat FROM media WHERE id = ?`

var errNoRow = errors.New("media: no such media")

func (s *Store) get(ctx context.Context, id string) (record, error) {
	var r record
	err := s.db.QueryRowContext(ctx, selectMedia, id).Scan(&r.id, &r.mimeType, &r.fileName, &r.sha256, &r.state,
		&r.err, &r.size, &r.source, &r.attempts, &r.nextAttemptAt, &r.createdAt, &r.expiresAt, &r.chat)
	if errors.Is(err, sql.ErrNoRows) {
		return r, errNoRow
	}
	return r, err
}

// due lists up to limit pending rows due at now, oldest first.
func (s *Store) due(ctx context.Context, now time.Time, limit int) ([]string, error) {
	return s.ids(ctx, `SELECT id FROM media WHERE state = 'pending' AND next_attempt_at <= ?
		ORDER BY next_attempt_at, created_at LIMIT ?`, now.UnixMilli(), limit)
}

// nextDue is when the earliest pending row not due at now is due.
func (s *Store) nextDue(ctx context.Context, now time.Time) (time.Time, bool) {
	var at sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT min(next_attempt_at) FROM media WHERE state = 'pending' AND next_attempt_at > ?`,
		now.UnixMilli()).Scan(&at)
	if err != nil || !at.Valid {
		return time.Time{}, false
	}
	return time.UnixMilli(at.Int64), true
}

// expiredIDs lists up to limit rows expired at now.
func (s *Store) expiredIDs(ctx context.Context, now time.Time, limit int) ([]string, error) {
	n := now.UnixMilli()
	return s.ids(ctx, `SELECT id FROM media WHERE expires_at <= ? OR created_at <= ? LIMIT ?`,
		n, n-s.retention.Milliseconds(), limit)
}

func (s *Store) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// exists reports whether id has a row.
func (s *Store) exists(ctx context.Context, id string) (bool, error) {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM media WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// finish moves a pending row to done; false when it is no longer pending
// (it expired and was deleted meanwhile).
func (s *Store) finish(ctx context.Context, id string) (bool, error) {
	var n int64
	err := s.batcher.Do(ctx, func(tx *sql.Tx) error {
		res, err := s.stmts.Exec(ctx, tx, `UPDATE media SET state = 'done', error = ''
			WHERE id = ? AND state = 'pending'`, id)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return n == 1, err
}

// retry keeps a pending row pending, to be tried again at at, noting the
// attempt and its error.
func (s *Store) retry(ctx context.Context, id string, attempts int, at time.Time, cause string) error {
	return s.batcher.Do(ctx, func(tx *sql.Tx) error {
		_, err := s.stmts.Exec(ctx, tx, `UPDATE media SET attempts = ?, next_attempt_at = ?, error = ?
			WHERE id = ? AND state = 'pending'`, attempts, at.UnixMilli(), cause, id)
		return err
	})
}

// wakeDeferred makes the pending rows deferred for want of a session due at
// now; it returns how many.
func (s *Store) wakeDeferred(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := s.batcher.Do(ctx, func(tx *sql.Tx) error {
		res, err := s.stmts.Exec(ctx, tx, `UPDATE media SET next_attempt_at = ?
			WHERE state = 'pending' AND error = ? AND next_attempt_at > ?`, now.UnixMilli(), causeNotLinked, now.UnixMilli())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// fail gives a pending row up.
func (s *Store) fail(ctx context.Context, id string, attempts int, cause string) error {
	return s.batcher.Do(ctx, func(tx *sql.Tx) error {
		_, err := s.stmts.Exec(ctx, tx, `UPDATE media SET state = 'failed', attempts = ?, error = ?
			WHERE id = ? AND state = 'pending'`, attempts, cause, id)
		return err
	})
}

// remove deletes rows.
func (s *Store) remove(ctx context.Context, ids []string) error {
	return s.batcher.Do(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := s.stmts.Exec(ctx, tx, `DELETE FROM media WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// redo sets a done row whose file was lost or damaged to be downloaded
// again, now.
func (s *Store) redo(ctx context.Context, id string) error {
	err := s.batcher.Do(ctx, func(tx *sql.Tx) error {
		_, err := s.stmts.Exec(ctx, tx, `UPDATE media SET state = 'pending', attempts = 0, next_attempt_at = ?, error = ''
			WHERE id = ? AND state = 'done'`, s.now().UnixMilli(), id)
		return err
	})
	if err == nil {
		s.registered.Notify()
	}
	return err
}
