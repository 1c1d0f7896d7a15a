package dispatch

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

	"github.com/msgbridge/msgbridge/bridge/session"
	"github.com/msgbridge/msgbridge/bridge/store"
)

// Sender delivers messages to WhatsApp (*session.Manager).
type Sender interface {
	Send(ctx context.Context, out session.Outgoing) error
	NewMessageID() string
}

// Options configures a Queue.
type Options struct {
	DB      *sql.DB
	Batcher *store.Batcher // the one writer of DB
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
}

// Queue is the durable send queue.
type Queue struct {
	opts Options
	wake chan struct{}

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
	return &Queue{opts: opts, wake: make(chan struct{}, 1), inflight: map[string]bool{}}
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

	var prior *idempotencyRecord
	err := q.opts.Batcher.Do(ctx, func(tx *sql.Tx) (err error) {
		if req.IdempotencyKey != "" {
			if prior, err = claimIdempotencyKey(tx, req.IdempotencyKey, requestID, now); err != nil || prior != nil {
				return err
			}
		}
		return insertMessages(tx, msgs, req.Items, now)
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
		q.attempt(ctx, &msgs[i])
		allSent = allSent && msgs[i].Status != StatusQueued && msgs[i].Status != StatusFailed
	}
	return Result{Messages: msgs, AllSent: allSent}, nil
}

func insertMessages(tx *sql.Tx, msgs []Message, items []Item, now time.Time) error {
	stmt, err := tx.Prepare(`INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, body,
		file_path, file_name, mimetype, file_size, status, next_attempt_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer func() { _ = stmt.Close() }()
	for i, m := range msgs {
		var size int64
		if f := items[i].File; f != nil {
			size = f.Size
		}
		if _, err := stmt.Exec(m.ID, m.WhatsAppID, m.RequestID, m.Position, m.Recipient, m.Type, m.body,
			m.filePath, m.fileName, m.mimeType, size, string(StatusQueued), now.UnixMilli(), now.UnixMilli(), now.UnixMilli()); err != nil {
			return fmt.Errorf("store message: %w", err)
		}
	}
	return nil
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
	sendErr := q.opts.Sender.Send(actx, session.Outgoing{
		ID: m.WhatsAppID, Recipient: m.Recipient, Kind: m.Type, Text: m.body,
		FilePath: m.filePath, FileName: m.fileName, MimeType: m.mimeType,
	})
	cancel()
	now := q.opts.Now()
	var changed bool
	recordErr := q.opts.Batcher.Do(context.WithoutCancel(ctx), func(tx *sql.Tx) (err error) {
		changed, err = recordAttempt(tx, m, sendErr, q.opts.Schedule, now)
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

// recordAttempt stores the outcome of one attempt of m (sendErr nil: sent)
// and reports whether the status changed. A receipt may already have moved
// the message past Queued: then the attempt did arrive, whatever it said.
func recordAttempt(tx *sql.Tx, m *Message, sendErr error, schedule []time.Duration, now time.Time) (bool, error) {
	var status string
	var attempts int
	if err := tx.QueryRow(`SELECT status, attempts FROM messages WHERE id = ?`, m.ID).Scan(&status, &attempts); err != nil {
		return false, fmt.Errorf("read message %s: %w", m.ID, err)
	}
	attempts++
	m.Attempts, m.RetryCount = attempts, attempts-1
	m.Status, m.UpdatedAt = Status(status), now
	day := now.UTC().Format(time.DateOnly)

	switch {
	case m.Status != StatusQueued:
		// Already past Queued: a receipt for this attempt arrived before its
		// own outcome was recorded. Nothing is due; an error the attempt
		// reported (a lost ack) is moot, since the message arrived.
		m.LastError = ""
		_, err := tx.Exec(`UPDATE messages SET attempts = ?, retry_count = ?, last_error = '', next_attempt_at = NULL,
			updated_at = ? WHERE id = ?`, attempts, attempts-1, now.UnixMilli(), m.ID)
		return false, err
	case sendErr == nil:
		m.Status, m.LastError = StatusSent, ""
		if _, err := tx.Exec(`UPDATE messages SET status = 'Sent', attempts = ?, retry_count = ?, last_error = '',
			next_attempt_at = NULL, updated_at = ? WHERE id = ?`, attempts, attempts-1, now.UnixMilli(), m.ID); err != nil {
			return false, err
		}
		return true, countDelivery(tx, day, outcomeSuccess)
	case attempts > len(schedule):
		m.Status, m.LastError = StatusFailed, sendErr.Error()
		if _, err := tx.Exec(`UPDATE messages SET status = 'Failed', attempts = ?, retry_count = ?, last_error = ?,
			next_attempt_at = NULL, updated_at = ? WHERE id = ?`, attempts, attempts-1, m.LastError, now.UnixMilli(), m.ID); err != nil {
			return false, err
		}
		return true, countDelivery(tx, day, outcomeFailed)
	default:
		m.LastError = sendErr.Error()
		next := now.Add(schedule[attempts-1])
		_, err := tx.Exec(`UPDATE messages SET attempts = ?, retry_count = ?, last_error = ?, next_attempt_at = ?,
			updated_at = ? WHERE id = ?`, attempts, attempts-1, m.LastError, next.UnixMilli(), now.UnixMilli(), m.ID)
		return false, err
	}
}

// Outcomes counted in delivery_daily.
const (
	outcomeSuccess = true
	outcomeFailed  = false
)

// countDelivery adds one to the day's success or failed count.
func countDelivery(tx *sql.Tx, day string, success bool) error {
	query := `INSERT INTO delivery_daily (day, failed) VALUES (?, 1) ON CONFLICT (day) DO UPDATE SET failed = failed + 1`
	if success {
		query = `INSERT INTO delivery_daily (day, success) VALUES (?, 1) ON CONFLICT (day) DO UPDATE SET success = success + 1`
	}
	_, err := tx.Exec(query, day)
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
