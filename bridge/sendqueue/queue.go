package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/durable"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// Sender delivers messages to WhatsApp: the part of bridge.Session the
// queue needs.
type Sender interface {
	Send(ctx context.Context, out bridge.Outgoing) error
	NewMessageID() string
	// Ready reports a session that can send now; while it is false every
	// Send fails with bridge.ErrNotLinked.
	Ready() bool
}

// Options configures a Queue.
type Options struct {
	// Log is the message log the queue stores into; required. Its clock,
	// logger, Events and Observer are the queue's too.
	Log    *MessageLog
	Sender Sender
	// Schedule holds the delays of the retries after the immediate attempt.
	Schedule []time.Duration
	// AttemptTimeout bounds one attempt (an upload can take a while).
	AttemptTimeout time.Duration
	// Rate paces the attempts (SEND_RATE); the zero value is unpaced.
	Rate bridge.SendRate
	// Checker, when set, checks a phone number before a message's attempt,
	// and each recipient of a status post (audience.go).
	Checker Checker
	// StatusAudience paces the recipients of status posts
	// (STATUS_AUDIENCE_RATE); the zero value is unpaced.
	StatusAudience bridge.SendRate
	// Accounts, when set, binds each message to the account it was accepted for.
	Accounts Accounts
	// Space, when set, refuses new messages while the disk is below its
	// reserve (the disk guard): an error of bridge.KindInsufficientStorage.
	Space interface{ CheckSpace() error }
	// Blocks, when set, refuses requests to a contact the account blocked
	// (bridge.ErrContactBlocked), whichever door they came in by.
	Blocks BlockList
}

// Queue is the durable send queue on a message log. It embeds the Log, so
// a Queue also reads messages and applies receipts.
type Queue struct {
	*MessageLog
	opts Options
	wake *durable.Signal

	// claims are the message IDs claimed: by a request, or by the worker.
	claims durable.Claims[string]

	mu      sync.Mutex
	sending map[string]bool // message IDs whose attempt runs now (claimed ones)

	pace     *pacer         // SEND_RATE
	audience *bridge.Budget // STATUS_AUDIENCE_RATE; nil: unpaced
	hold     hold           // WhatsApp's restrictions
	// released is closed and replaced (under mu) whenever attempts end, for
	// requests that wait for an earlier message of their chat (order.go).
	released chan struct{}
	// releases counts the announcements: a waiter that read the order
	// before one happened must look again rather than wait for the next.
	releases uint64
}

// New returns a queue sending through opts.Sender; Run must run for retries
// to happen.
func New(opts Options) *Queue {
	if opts.Log == nil || opts.Sender == nil {
		panic("sendqueue.New: Options.Log and Options.Sender are required")
	}
	if opts.AttemptTimeout == 0 {
		opts.AttemptTimeout = 2 * time.Minute
	}
	return &Queue{MessageLog: opts.Log, opts: opts, wake: durable.NewSignal(), sending: map[string]bool{},
		pace: newPacer(opts.Rate), audience: audienceBudget(opts.StatusAudience)}
}

// Result is the outcome of Submit.
type Result struct {
	Messages []bridge.Message
	// Replay: an earlier request had the same idempotency key and nothing
	// was sent this time. Stored is its recorded response; when the first
	// request ended before recording one (a crash), Messages are its
	// messages as they stand now.
	Replay bool
	Stored *Outcome
	// Places are where the Queued ones of Messages stand, by index; the
	// zero Place for the others, and for a replay.
	Places []Place
}

// Submit stores every item of req as a message in one transaction, durably,
// then attempts each once, in order. A failed attempt is left to the retry
// schedule; the stored messages are never lost, whatever happens after the
// commit. An Idempotency-Key seen with the same request in the window
// replays the first response; seen with another request, it is a conflict
// (idempotency_key_reused) and nothing is stored.
func (q *Queue) Submit(ctx context.Context, req Request) (Result, error) {
	hash, err := q.admit(req)
	if err != nil {
		return Result{}, err
	}
	now := q.now()
	msgs := q.newRows(req, now)
	// Claimed before the insert: the retry worker must not pick these up
	// while their immediate attempt runs.
	q.claim(msgs)
	defer q.release(msgs)

	// With no session, the immediate attempt can only fail: record it in
	// the same transaction as the messages instead of in a second one.
	attemptNow := q.opts.Sender.Ready() && !req.AwaitApproval
	if req.AwaitApproval {
		holdForApproval(msgs)
	} else if !attemptNow {
		for i := range msgs {
			msgs[i].Attempts = 1
			msgs[i].Status, msgs[i].nextAttempt, msgs[i].LastError = plan(1, bridge.ErrNotLinked, q.opts.Schedule, now)
		}
	}
	var prior *idempotencyRecord
	account := q.account()
	heads := true // the first message heads its chat: the worker must hear of it
	err = q.batcher.Do(ctx, func(tx *sql.Tx) (err error) {
		if req.IdempotencyKey != "" {
			prior, err = q.claimIdempotencyKey(ctx, tx, req.IdempotencyKey, hash, msgs[0].requestID, now)
			if err != nil || prior != nil {
				return err
			}
		}
		if err := q.storeMessages(ctx, tx, msgs, req.Items, now, account); err != nil || attemptNow || req.AwaitApproval {
			return err
		}
		heads, err = q.headsItsChat(ctx, tx, msgs[0].ID)
		return err
	})
	if err != nil {
		return Result{}, storeFailed(err)
	}
	if prior != nil {
		removeSpooled(req.Items) // this request's files are not needed
		return q.replay(ctx, prior)
	}
	q.accepted(msgs)
	switch {
	case req.AwaitApproval: // nothing is due until a person approves
	case attemptNow:
		q.attemptAccepted(ctx, msgs)
	case heads:
		q.wake.NotifyDue(earliestRetry(msgs)) // their retries are due on the schedule
	} // else: due only once the earlier one ends, and its end wakes the worker
	return q.result(ctx, msgs), nil
}

// admit checks what a request needs before anything is stored: its
// content, room on the disk, and the hash its Idempotency-Key stands for.
func (q *Queue) admit(req Request) (hash string, err error) {
	if err := req.validate(); err != nil {
		return "", err
	}
	if q.opts.Space != nil {
		if err := q.opts.Space.CheckSpace(); err != nil {
			return "", err
		}
	}
	if q.opts.Blocks != nil && q.opts.Blocks.Blocked(req.Recipient) {
		return "", bridge.ErrContactBlocked
	}
	if req.IdempotencyKey == "" {
		return "", nil
	}
	return requestHash(req)
}

// result is the answer to an accepted request: its messages with their
// places in the queue.
func (q *Queue) result(ctx context.Context, msgs []row) Result {
	places, err := q.places(context.WithoutCancel(ctx), msgs)
	if err != nil {
		// The messages are stored and will go: only the estimate is lost.
		q.logger.Error(err, "read the queue's schedule")
		places = make([]Place, len(msgs))
	}
	return Result{Messages: messages(msgs), Places: places}
}

// earliestRetry is when the first of msgs' next attempts is due (now when
// one has none: the worker looks at once).
func earliestRetry(msgs []row) time.Time {
	var first int64
	for _, m := range msgs {
		if !m.nextAttempt.Valid {
			return time.Time{}
		}
		if first == 0 || m.nextAttempt.Int64 < first {
			first = m.nextAttempt.Int64
		}
	}
	return time.UnixMilli(first)
}

// newRows makes the messages of req, Queued and not yet attempted.
func (q *Queue) newRows(req Request, now time.Time) []row {
	requestID := uuid.NewString()
	msgs := make([]row, len(req.Items))
	for i, it := range req.Items {
		msgs[i] = row{
			Message: bridge.Message{
				ID: uuid.Must(uuid.NewV7()).String(), WhatsAppID: q.opts.Sender.NewMessageID(), Recipient: req.Recipient,
				Type: it.Type, Status: bridge.StatusQueued, CreatedAt: now, UpdatedAt: now,
			},
			requestID: requestID, position: i, body: it.Text, replyTo: it.ReplyTo, details: detailsOf(it),
		}
		if it.File != nil {
			msgs[i].filePath, msgs[i].fileName, msgs[i].mimeType = it.File.Path, it.File.Name, it.File.MimeType
		}
	}
	return msgs
}

// accepted tells the observer of newly stored messages: each reached
// Queued, and a first attempt recorded at insert (no session) counts as a
// failed attempt like any other, with the nothing it took.
func (q *Queue) accepted(msgs []row) {
	for _, m := range msgs {
		if m.Status == bridge.StatusAwaitingApproval {
			q.observer.MessageStatus(m.Status)
			continue
		}
		q.observer.MessageStatus(bridge.StatusQueued)
		if m.Attempts == 0 {
			continue
		}
		q.observer.SendAttempt(false, 0)
		if m.Status != bridge.StatusQueued {
			q.observer.MessageStatus(m.Status)
		}
	}
}

const insertMessage = `INSERT INTO messages (id, whatsapp_id, request_id, position, recipient, type, body,
	file_path, file_name, mimetype, file_size, status, attempts, last_error, next_attempt_at, created_at, updated_at,
	reply_to, details)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// insertMessages stores msgs as they stand: due now, or with their first
// attempt already recorded (see Submit).
func (q *Queue) insertMessages(ctx context.Context, tx *sql.Tx, msgs []row, items []Item, now time.Time) error {
	for i, m := range msgs {
		var size int64
		if f := items[i].File; f != nil {
			size = f.Size
		}
		next := m.nextAttempt
		if m.Attempts == 0 && m.Status == bridge.StatusQueued {
			next = sql.NullInt64{Int64: now.UnixMilli(), Valid: true}
		}
		if _, err := q.stmts.Exec(ctx, tx, insertMessage, m.ID, m.WhatsAppID, m.requestID, m.position, m.Recipient.JID(),
			string(m.Type), m.body, m.filePath, m.fileName, m.mimeType, size, string(m.Status), m.Attempts, m.LastError,
			next, now.UnixMilli(), now.UnixMilli(), m.replyTo, m.details.encode()); err != nil {
			return fmt.Errorf("store message: %w", err)
		}
		if err := q.countOutcome(ctx, tx, m.Status, now); err != nil {
			return err
		}
		if m.Status != bridge.StatusQueued {
			if err := q.events.MessageStatus(ctx, tx, m.Message); err != nil {
				return err
			}
		}
	}
	return nil
}

// storeFailed keeps an application error as it is, answers a full disk
// with insufficient_storage (507, as the disk guard does) and hides any
// other behind store_failed: the request was not stored, so nothing is sent.
func storeFailed(err error) error {
	var e *bridge.Error
	if errors.As(err, &e) {
		return err
	}
	if sqlite.IsDiskFull(err) {
		return bridge.Errorf(bridge.KindInsufficientStorage, bridge.CodeInsufficientStorage,
			"the disk is full; nothing was stored; retry once space is freed")
	}
	return bridge.Internal(bridge.CodeStoreFailed, "the request could not be stored; nothing will be sent", err)
}

// claim claims new messages, which nobody else knows yet.
func (q *Queue) claim(msgs []row) {
	for _, m := range msgs {
		q.claims.TryClaim(m.ID)
	}
}

// release gives msgs' claims back and wakes the requests that wait for an
// earlier message of their chat; it announces under mu after the claims
// are released, so a waiter that saw a claim held gets the channel closed.
func (q *Queue) release(msgs []row) {
	for _, m := range msgs {
		q.claims.Release(m.ID)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.announceLocked()
}

// markSending records that id's attempt runs now (or, false, ended).
func (q *Queue) markSending(id string, on bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if on {
		q.sending[id] = true
		return
	}
	delete(q.sending, id)
	q.announceLocked()
}

// announceLocked wakes the requests that wait for an earlier message of
// their chat (order.go).
func (q *Queue) announceLocked() {
	q.releases++
	if q.released != nil {
		close(q.released)
		q.released = nil
	}
}

func removeSpooled(items []Item) {
	for _, it := range items {
		if it.File != nil {
			_ = os.Remove(it.File.Path)
		}
	}
}
