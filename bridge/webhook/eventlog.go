package webhook

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/msgbridge/msgbridge/bridge/durable"
)

// DefaultKeepEvents is how long the event log keeps an event when
// Options.KeepEvents is zero (EVENT_LOG_RETENTION's default): a stream
// reader (GET /api/events) resumes with Last-Event-ID within it.
const DefaultKeepEvents = 24 * time.Hour

// Logged is one event of the event log; Seq, its row id, orders them and
// is the stream's event id.
type Logged struct {
	Seq int64
	Stored
}

// published is closed and replaced at every logged event: the stream
// readers wait on it. It costs the bridge a close, whatever the readers do.
type published struct {
	mu sync.Mutex
	ch chan struct{}
}

func (p *published) wait() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch == nil {
		p.ch = make(chan struct{})
	}
	return p.ch
}

func (p *published) notify() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch != nil {
		close(p.ch)
		p.ch = nil
	}
}

const insertLogged = `INSERT INTO event_log (webhook_id, event, payload, created_at) VALUES (?, ?, ?, ?)`

// log appends ev to the event log in tx.
func (o *Outbox) log(ctx context.Context, tx *sql.Tx, ev Event, body []byte) error {
	if _, err := o.stmts.Exec(ctx, tx, insertLogged, ev.ID, ev.Type, body, o.opts.Now().UnixMilli()); err != nil {
		return fmt.Errorf("log %s: %w", ev.Type, err)
	}
	o.published.notify() // readers wait for the commit (Settle) before they look
	return nil
}

// Published returns a channel closed at the next logged event. Take it
// before reading (EventsAfter), so that no event falls in between.
func (o *Outbox) Published() <-chan struct{} { return o.published.wait() }

// Settle returns once the transaction that logged an event has committed:
// the event is notified from inside it.
func (o *Outbox) Settle(ctx context.Context) error {
	return o.opts.Batcher.Do(ctx, func(*sql.Tx) error { return nil })
}

// LatestEventID is the id of the last logged event, 0 when none.
func (o *Outbox) LatestEventID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	err := o.opts.DB.QueryRowContext(ctx, `SELECT max(id) FROM event_log`).Scan(&id)
	return id.Int64, err
}

// EventBounds are the id of the oldest event the log keeps and of the
// newest it ever logged, kept or swept (ids are never used twice:
// AUTOINCREMENT remembers the highest in sqlite_sequence). An empty log
// has oldest = newest+1. A stream told to resume after an id below
// oldest-1 would miss what was swept, and one above newest holds an id of
// another log (a DATA_DIR restored from a backup).
func (o *Outbox) EventBounds(ctx context.Context) (oldest, newest int64, err error) {
	var lowest, highest sql.NullInt64
	err = o.opts.DB.QueryRowContext(ctx, `SELECT (SELECT min(id) FROM event_log),
		(SELECT seq FROM sqlite_sequence WHERE name = 'event_log')`).Scan(&lowest, &highest)
	if !lowest.Valid {
		return highest.Int64 + 1, highest.Int64, err
	}
	return lowest.Int64, highest.Int64, err
}

// EventsAfter reads up to limit logged events after id after, oldest
// first.
func (o *Outbox) EventsAfter(ctx context.Context, after int64, limit int) ([]Logged, error) {
	rows, err := o.opts.DB.QueryContext(ctx,
		`SELECT id, webhook_id, event, payload FROM event_log WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	return scanLogged(rows)
}

// scanLogged reads rows of (id, webhook_id, event, payload) and closes them.
func scanLogged(rows *sql.Rows) ([]Logged, error) {
	defer func() { _ = rows.Close() }()
	var out []Logged
	for rows.Next() {
		var l Logged
		if err := rows.Scan(&l.Seq, &l.ID, &l.Type, &l.Payload); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

const pruneLogged = `DELETE FROM event_log WHERE id IN (SELECT id FROM event_log WHERE created_at < ? LIMIT ?)`

// pruneLog deletes the logged events older than Options.KeepEvents.
func (o *Outbox) pruneLog(ctx context.Context) (int64, error) {
	cutoff := o.opts.Now().Add(-o.opts.KeepEvents).UnixMilli()
	return durable.DeleteChunked(ctx, o.opts.Batcher, pruneChunk, pruneLogged, cutoff)
}
