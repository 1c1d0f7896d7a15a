package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// Outbox is the part of the webhook outbox (bridge.Outbox) the log uses:
// every status change of a message is reported inside the transaction that
// stores it (the event commits with the change, or neither does). An error
// undoes the change.
type Outbox interface {
	MessageStatus(ctx context.Context, tx *sql.Tx, m bridge.Message) error
}

// Observer hears what the log and the queue do, after it is committed, for
// metrics (*metrics.Metrics). Its methods must be quick and safe for
// concurrent use.
type Observer interface {
	// MessageStatus: a message reached status; Queued when accepted.
	MessageStatus(status bridge.Status)
	// SendAttempt: one attempt ended, sent (ok) or not, after d.
	SendAttempt(ok bool, d time.Duration)
}

// MessageLogOptions configures a MessageLog.
type MessageLogOptions struct {
	DB       *sql.DB
	Batcher  *sqlite.Batcher // the one writer of DB
	Outbox   Outbox          // nil: none
	Observer Observer        // nil: none
	Now      func() time.Time
	// Log logs what goes wrong in the background, for the log and the queue
	// built on it (a failed attempt record, an unreadable due message).
	Log logr.Logger
}

// MessageLog is the message log: it reads messages and applies WhatsApp's
// receipts. It needs no Sender, so the session can be built with a MessageLog as
// its receipts target before the Queue that sends through the session.
type MessageLog struct {
	db       *sql.DB
	batcher  *sqlite.Batcher
	events   Outbox
	observer Observer
	now      func() time.Time
	logger   logr.Logger
	stmts    *sqlite.Statements
}

type noEvents struct{}

func (noEvents) MessageStatus(context.Context, *sql.Tx, bridge.Message) error { return nil }

type noObserver struct{}

func (noObserver) MessageStatus(bridge.Status)     {}
func (noObserver) SendAttempt(bool, time.Duration) {}

// NewMessageLog returns the message log on opts.DB.
func NewMessageLog(opts MessageLogOptions) *MessageLog {
	l := &MessageLog{
		db: opts.DB, batcher: opts.Batcher, events: opts.Outbox, observer: opts.Observer,
		now: opts.Now, logger: opts.Log, stmts: sqlite.NewStatements(opts.DB),
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.events == nil {
		l.events = noEvents{}
	}
	if l.observer == nil {
		l.observer = noObserver{}
	}
	return l
}

// messageColumns are the columns scanRow reads, in its order.
const messageColumns = `id, whatsapp_id, request_id, position, recipient, type, status, retry_count, attempts,
	last_error, created_at, updated_at, body, file_path, file_name, mimetype, reply_to, details`

type rowScanner interface{ Scan(dest ...any) error }

func scanRow(r rowScanner) (row, error) {
	var (
		m                row
		jid, typ, status string
		created, updated int64
		rawDetails       string
	)
	err := r.Scan(&m.ID, &m.WhatsAppID, &m.requestID, &m.position, &jid, &typ, &status, &m.RetryCount,
		&m.Attempts, &m.LastError, &created, &updated, &m.body, &m.filePath, &m.fileName, &m.mimeType,
		&m.replyTo, &rawDetails)
	if err != nil {
		return m, err
	}
	if m.details, err = decodeDetails(rawDetails); err != nil {
		return m, fmt.Errorf("message %s: %w", m.ID, err)
	}
	// The store holds the JID, WhatsApp's address, which names the recipient
	// whatever its kind.
	if m.Recipient, err = bridge.RecipientFromJID(jid); err != nil {
		return m, fmt.Errorf("message %s: stored recipient %q: %w", m.ID, jid, err)
	}
	m.Type, m.Status = bridge.MessageType(typ), bridge.Status(status)
	m.CreatedAt, m.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return m, nil
}

// errNotFound: no message with the id asked for.
func errNotFound() error {
	return bridge.Errorf(bridge.KindNotFound, bridge.CodeNotFound, "no message with this id")
}

// readFailed hides a storage error from clients.
func readFailed(err error) error {
	return bridge.Internal(bridge.CodeReadFailed, "the message log could not be read", err)
}

// Get returns one message of the log; a bridge.Error of KindNotFound
// (not_found) when there is none with id.
func (l *MessageLog) Get(ctx context.Context, id string) (bridge.Message, error) {
	m, err := scanRow(l.db.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages WHERE id = ?`, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return bridge.Message{}, errNotFound()
	case err != nil:
		return bridge.Message{}, readFailed(err)
	}
	return m.Message, nil
}

func (l *MessageLog) requestMessages(ctx context.Context, requestID string) ([]row, error) {
	return l.query(ctx, `SELECT `+messageColumns+` FROM messages WHERE request_id = ? ORDER BY position`, requestID)
}

func (l *MessageLog) query(ctx context.Context, query string, args ...any) ([]row, error) {
	rows, err := l.stmts.Read(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []row
	for rows.Next() {
		m, err := scanRow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Depth is the number of messages waiting for an attempt, read from the
// partial index of due messages (cheap enough for every metrics scrape).
func (l *MessageLog) Depth(ctx context.Context) (int, error) {
	var n int
	err := l.db.QueryRowContext(ctx, `SELECT count(*) FROM messages WHERE next_attempt_at IS NOT NULL`).Scan(&n)
	return n, err
}
