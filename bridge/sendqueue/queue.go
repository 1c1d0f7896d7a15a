package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// Sender delivers messages to WhatsApp (*whatsapp.Manager).
type Sender interface {
	Send(ctx context.Context, out bridge.Outgoing) error
	NewMessageID() string
	// Ready reports a session that can send now; while it is false every
	// Send fails with bridge.ErrNotLinked.
	Ready() bool
}

// Options configures a Queue.
type Options struct {
	DB      *sql.DB
	Batcher *sqlite.Batcher // the one writer of DB
	Sender  Sender
	// Schedule holds the delays of the retries after the immediate attempt.
	Schedule []time.Duration
	// AttemptTimeout bounds one attempt (an upload can take a while).
	AttemptTimeout time.Duration
	Log            logr.Logger
	Now            func() time.Time
	// OnStatus, when set, hears every status change (for webhooks and
	// metrics). It runs after the change is committed.
	OnStatus func(m Message)
	// OnStatusTx, when set, hears every status change inside the
	// transaction that stores it (for the webhook outbox: the event commits
	// with the change, or neither does). An error undoes the change.
	OnStatusTx func(ctx context.Context, tx *sql.Tx, m Message) error
	// OnAttempt, when set, hears every attempt's error (nil: sent) and
	// duration, for metrics.
	OnAttempt func(err error, d time.Duration)
}

// Queue is the durable send queue.
type Queue struct {
	opts  Options
	stmts *sqlite.Statements
	wake  chan struct{}

	mu       sync.Mutex
	inflight map[string]bool // message IDs being attempted now
}

// New returns a queue; Run must run for retries to happen.
func New(opts Options) *Queue {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.AttemptTimeout == 0 {
		opts.AttemptTimeout = 2 * time.Minute
	}
	return &Queue{opts: opts, stmts: sqlite.NewStatements(opts.DB), wake: make(chan struct{}, 1), inflight: map[string]bool{}}
}

// Result is the outcome of Submit.
type Result struct {
	Messages []Message
	// AllSent: every message was sent on its immediate attempt.
	AllSent bool
	// Replay: an earlier request had the same idempotency key and nothing
	// was sent this time. Stored is its recorded response; when the first
	// request ended before recording one (a crash), Messages are its
	// messages as they stand now.
	Replay bool
	Stored *StoredResponse
}

// Submit stores every item of req as a message in one transaction, durably,
// then attempts each once, in order. A failed attempt is left to the retry
// schedule; the stored messages are never lost, whatever happens after the
// commit.
func (q *Queue) Submit(ctx context.Context, req Request) (Result, error) {
	now := q.opts.Now()
	requestID := uuid.NewString()
	msgs := make([]Message, len(req.Items))
	for i, it := range req.Items {
		msgs[i] = Message{
			ID: uuid.Must(uuid.NewV7()).String(), WhatsAppID: q.opts.Sender.NewMessageID(), RequestID: requestID,
			Position: i, Recipient: req.Recipient, Type: it.Type, Status: StatusQueued, CreatedAt: now, UpdatedAt: now,
			body: it.Text,
		}
		if it.File != nil {
			msgs[i].filePath, msgs[i].fileName, msgs[i].mimeType = it.File.Path, it.File.Name, it.File.MimeType
		}
	}
	// Claimed before the insert: the retry worker must not pick these up
	// while their immediate attempt runs.
	q.claim(msgs)
	defer q.release(msgs)

	// With no session, the immediate attempt can only fail: record it in
	// the same transaction as the messages instead of in a second one.
	attemptNow := q.opts.Sender.Ready()
	if !attemptNow {
		for i := range msgs {
			msgs[i].Attempts = 1
			msgs[i].Status, msgs[i].nextAttempt, msgs[i].LastError = plan(1, bridge.ErrNotLinked, q.opts.Schedule, now)
		}
	}
	var prior *idempotencyRecord
	err := q.opts.Batcher.Do(ctx, func(tx *sql.Tx) (err error) {
		if req.IdempotencyKey != "" {
			if prior, err = claimIdempotencyKey(tx, req.IdempotencyKey, requestID, now); err != nil || prior != nil {
				return err
			}
		}
		return q.insertMessages(ctx, tx, msgs, req.Items, now)
	})
	if err != nil {
		return Result{}, err
	}
	if prior != nil {
		removeSpooled(req.Items) // this request's files are not needed
		return q.replay(ctx, prior)
	}

	allSent := true
	for i := range msgs {
		if attemptNow {
			q.attempt(ctx, &msgs[i])
		}
		allSent = allSent && msgs[i].Status != StatusQueued && msgs[i].Status != StatusFailed
	}
	if !attemptNow {
		q.signal() // their retries are due on the schedule
	}
	return Result{Messages: msgs, AllSent: allSent}, nil
}

const insertMessage = `INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, body,
	file_path, file_name, mimetype, file_size, status, attempts, last_error, next_attempt_at, created_at, updated_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// insertMessages stores msgs as they stand: due now, or with their first
// attempt already recorded (see Submit).
func (q *Queue) insertMessages(ctx context.Context, tx *sql.Tx, msgs []Message, items []Item, now time.Time) error {
	for i, m := range msgs {
		var size int64
		if f := items[i].File; f != nil {
			size = f.Size
		}
		next := m.nextAttempt
		if m.Attempts == 0 {
			next = sql.NullInt64{Int64: now.UnixMilli(), Valid: true}
		}
		if _, err := q.stmts.Exec(ctx, tx, insertMessage, m.ID, m.WhatsAppID, m.RequestID, m.Position, m.Recipient, m.Type, m.body,
			m.filePath, m.fileName, m.mimeType, size, string(m.Status), m.Attempts, m.LastError, next, now.UnixMilli(), now.UnixMilli()); err != nil {
			return fmt.Errorf("store message: %w", err)
		}
		if err := q.countOutcome(ctx, tx, m.Status, now); err != nil {
			return err
		}
		if m.Status != StatusQueued {
			if err := q.statusChangedTx(ctx, tx, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// statusChangedTx runs OnStatusTx for m, whose new status tx stores.
func (q *Queue) statusChangedTx(ctx context.Context, tx *sql.Tx, m Message) error {
	if q.opts.OnStatusTx == nil {
		return nil
	}
	return q.opts.OnStatusTx(ctx, tx, m)
}

func (q *Queue) claim(msgs []Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		q.inflight[m.ID] = true
	}
}

// tryClaim claims one message unless it is already being attempted.
func (q *Queue) tryClaim(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.inflight[id] {
		return false
	}
	q.inflight[id] = true
	return true
}

func (q *Queue) release(msgs []Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		delete(q.inflight, m.ID)
	}
}

// attempt sends m once and records the outcome, updating m in place.
func (q *Queue) attempt(ctx context.Context, m *Message) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.opts.AttemptTimeout)
	started := time.Now()
	to, sendErr := bridge.RecipientFromJID(m.Recipient)
	if sendErr == nil {
		sendErr = q.opts.Sender.Send(actx, bridge.Outgoing{
			ID: m.WhatsAppID, Recipient: to, Type: bridge.MessageType(m.Type), Text: m.body,
			FilePath: m.filePath, FileName: m.fileName, MimeType: m.mimeType,
		})
	}
	cancel()
	if q.opts.OnAttempt != nil {
		q.opts.OnAttempt(sendErr, time.Since(started))
	}
	now := q.opts.Now()
	var changed bool
	bg := context.WithoutCancel(ctx)
	recordErr := q.opts.Batcher.Do(bg, func(tx *sql.Tx) (err error) {
		changed, err = q.recordAttempt(bg, tx, m, sendErr, now)
		return err
	})
	if recordErr != nil {
		// The attempt's outcome is unknown to the database: the message stays
		// due and is attempted again, with the same WhatsApp ID, which the
		// recipient's phone deduplicates.
		q.opts.Log.Error(recordErr, "record send attempt", "message", m.ID)
		return
	}
	if m.Status != StatusQueued && m.filePath != "" {
		_ = os.Remove(m.filePath) // done with the attachment
	}
	if m.Status == StatusQueued {
		q.signal()
	}
	if changed && q.opts.OnStatus != nil {
		q.opts.OnStatus(*m)
	}
}

// plan is the retry policy: the state of a message after its attempt
// number attempts (1 = the immediate one) ended with sendErr (nil: sent).
// The next attempt, if any, is due after the schedule's delay for it.
func plan(attempts int, sendErr error, schedule []time.Duration, now time.Time) (Status, sql.NullInt64, string) {
	switch {
	case sendErr == nil:
		return StatusSent, sql.NullInt64{}, ""
	case attempts > len(schedule):
		return StatusFailed, sql.NullInt64{}, sendErr.Error()
	default:
		return StatusQueued, sql.NullInt64{Int64: now.Add(schedule[attempts-1]).UnixMilli(), Valid: true}, sendErr.Error()
	}
}

// Statements of the attempt bookkeeping.
const (
	recordOutcome = `UPDATE messages SET status = ?, attempts = ?, retry_count = ?, last_error = ?,
		next_attempt_at = ?, updated_at = ? WHERE id = ? AND status = 'Queued'`
	recordLateOutcome = `UPDATE messages SET attempts = ?, retry_count = ?, last_error = '', next_attempt_at = NULL,
		updated_at = ? WHERE id = ? RETURNING status`
)

// recordAttempt stores the outcome of one attempt of m (sendErr nil: sent)
// and reports whether the status changed. Only the claimant of a message
// attempts it, so m.Attempts is the stored count; a receipt can only have
// moved the status forward, and then the attempt did arrive, whatever it
// said (a lost ack).
func (q *Queue) recordAttempt(ctx context.Context, tx *sql.Tx, m *Message, sendErr error, now time.Time) (bool, error) {
	attempts := m.Attempts + 1
	status, next, lastErr := plan(attempts, sendErr, q.opts.Schedule, now)
	res, err := q.stmts.Exec(ctx, tx, recordOutcome, string(status), attempts, attempts-1, lastErr, next, now.UnixMilli(), m.ID)
	if err != nil {
		return false, err
	}
	m.Attempts, m.RetryCount, m.UpdatedAt = attempts, attempts-1, now
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return false, err
		}
		var current string
		if err := q.stmts.QueryRow(ctx, tx, recordLateOutcome, attempts, attempts-1, now.UnixMilli(), m.ID).Scan(&current); err != nil {
			return false, fmt.Errorf("record attempt of %s: %w", m.ID, err)
		}
		m.Status, m.LastError = Status(current), ""
		return false, nil
	}
	m.Status, m.LastError = status, lastErr
	if status == StatusQueued {
		return false, nil
	}
	if err := q.countOutcome(ctx, tx, status, now); err != nil {
		return false, err
	}
	return true, q.statusChangedTx(ctx, tx, *m)
}

// countOutcome adds a final outcome (Sent or Failed) to the day's rollup.
func (q *Queue) countOutcome(ctx context.Context, tx *sql.Tx, status Status, now time.Time) error {
	if status != StatusSent && status != StatusFailed {
		return nil
	}
	return countDelivery(ctx, q.stmts, tx, now.UTC().Format(time.DateOnly), status == StatusSent)
}

// countDelivery adds one to the day's success or failed count.
func countDelivery(ctx context.Context, stmts *sqlite.Statements, tx *sql.Tx, day string, success bool) error {
	query := `INSERT INTO delivery_daily (day, failed) VALUES (?, 1) ON CONFLICT (day) DO UPDATE SET failed = failed + 1`
	if success {
		query = `INSERT INTO delivery_daily (day, success) VALUES (?, 1) ON CONFLICT (day) DO UPDATE SET success = success + 1`
	}
	_, err := stmts.Exec(ctx, tx, query, day)
	return err
}

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func removeSpooled(items []Item) {
	for _, it := range items {
		if it.File != nil {
			_ = os.Remove(it.File.Path)
		}
	}
}

// ErrNotFound: no message with that ID.
var ErrNotFound = errors.New("no such message")
