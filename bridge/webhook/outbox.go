package webhook

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"

	"github.com/msgbridge/msgbridge/bridge/durable"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
)

// Defaults of Options.
const (
	defaultWorkers = 8
	defaultMaxAge  = 24 * time.Hour
	defaultTimeout = 10 * time.Second
	defaultPage    = 256
)

// Observer hears every delivery attempt's outcome (delivered: a 2xx
// answer) and every event that became a dead letter; *metrics.Metrics is
// one.
type Observer interface {
	WebhookDelivery(delivered bool)
	WebhookDeadLetter()
}

// Options configures the outbox.
type Options struct {
	DB *sql.DB
	// Batcher is DB's one writer. Every transaction given to Enqueue must be
	// one of its transactions: the worker waits on it to see a new row.
	Batcher *sqlite.Batcher
	// URL receives the events; empty turns webhooks off (Enqueue stores
	// nothing).
	URL string
	// Key is the decoded whsec_ secret; empty: deliveries are unsigned.
	Key []byte
	// Workers bounds concurrent deliveries (default 8).
	Workers int
	// MaxAge is how long after its creation an event is retried before it
	// becomes a dead letter (default 24 h).
	MaxAge time.Duration
	// Timeout bounds one delivery (default 10 s).
	Timeout time.Duration
	// PageSize is how many due rows one scan reads (default 256).
	PageSize int
	// Client posts the events; a client with Timeout when nil. Redirects
	// are never followed, whatever its CheckRedirect.
	Client *http.Client
	Now    func() time.Time
	Log    logr.Logger
	// Observer, when set, hears every delivery attempt's outcome, for
	// metrics.
	Observer Observer
}

// Outbox stores events and delivers them (Run).
type Outbox struct {
	opts  Options
	stmts *sqlite.Statements
	wake  *durable.Signal
	// lanes: one delivery under way per ordering key; never a row ended
	// since the current scan began.
	lanes durable.Lanes[string, int64]
}

// New returns an outbox; Run must run for events to be delivered.
func New(opts Options) *Outbox {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Workers <= 0 {
		opts.Workers = defaultWorkers
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = defaultMaxAge
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	if opts.PageSize <= 0 {
		opts.PageSize = defaultPage
	}
	var client http.Client
	if opts.Client != nil {
		client = *opts.Client
	} else {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = opts.Workers // keep one connection per worker alive
		client = http.Client{Timeout: opts.Timeout, Transport: tr}
	}
	client.CheckRedirect = refuseRedirects // whatever the caller's client does
	opts.Client = &client
	return &Outbox{
		opts: opts, stmts: sqlite.NewStatements(opts.DB), wake: durable.NewSignal(),
	}
}

// Enabled reports whether webhooks are configured.
func (o *Outbox) Enabled() bool { return o != nil && o.opts.URL != "" }

const (
	maxRankOfKey = `SELECT coalesce(max(rank), 0) FROM webhook_outbox WHERE ordering_key = ?`
	insertEvent  = `INSERT INTO webhook_outbox (webhook_id, event, payload, ordering_key, rank, next_attempt_at, expires_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
)

// Enqueue stores ev in tx, a transaction of Options.Batcher, so that the
// event commits together with the change that causes it. With webhooks off
// it stores nothing.
func (o *Outbox) Enqueue(ctx context.Context, tx *sql.Tx, ev Event) error {
	if !o.Enabled() {
		return nil
	}
	if ev.Rank > 0 {
		var top int
		if err := o.stmts.QueryRow(ctx, tx, maxRankOfKey, ev.Key).Scan(&top); err != nil {
			return fmt.Errorf("webhook %s: %w", ev.Type, err)
		}
		if top >= ev.Rank {
			return nil // a later status of this message is already queued
		}
	}
	if ev.ID == "" {
		ev.ID = NewID()
	}
	_, err := o.insert(ctx, tx, insertEvent, ev)
	return err
}

// NewID returns a new webhook-id, for an event whose id must be known
// before it is enqueued.
func NewID() string { return "msg_" + uuid.Must(uuid.NewV7()).String() }

// insert runs query, an insertEvent, for ev, due now; it reports whether a
// row was inserted.
func (o *Outbox) insert(ctx context.Context, tx *sql.Tx, query string, ev Event) (bool, error) {
	body, err := json.Marshal(ev.Payload)
	if err != nil {
		return false, fmt.Errorf("webhook %s: %w", ev.Type, err)
	}
	now := o.opts.Now().UnixMilli()
	res, err := o.stmts.Exec(ctx, tx, query, ev.ID, ev.Type, body, ev.Key, ev.Rank, now,
		now+o.opts.MaxAge.Milliseconds(), now)
	if err != nil {
		return false, fmt.Errorf("webhook %s: %w", ev.Type, err)
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return false, err
	}
	o.wake.Notify() // the dispatcher waits for the commit before it looks
	return true, nil
}

const (
	dropEnded       = `DELETE FROM webhook_outbox WHERE webhook_id = ? AND status <> 'pending'`
	insertUnlessSet = insertEvent + ` ON CONFLICT (webhook_id) DO NOTHING`
)

// Requeue stores ev again under its ID (which it must have), in tx, due
// now with a new retry window: a replay. It reports whether it did. An
// event of that ID that is still pending is left as it is (it is going to
// be delivered; a second row would deliver it twice); a delivered or dead
// row of it is replaced, so that the replay comes after the events of its
// key already pending. Rank plays no part: a replay is asked for. With
// webhooks off it stores nothing.
func (o *Outbox) Requeue(ctx context.Context, tx *sql.Tx, ev Event) (bool, error) {
	if !o.Enabled() {
		return false, nil
	}
	if ev.ID == "" {
		return false, fmt.Errorf("webhook %s: requeue of an event without its id", ev.Type)
	}
	if _, err := o.stmts.Exec(ctx, tx, dropEnded, ev.ID); err != nil {
		return false, fmt.Errorf("webhook %s: %w", ev.Type, err)
	}
	return o.insert(ctx, tx, insertUnlessSet, ev)
}

// EnqueueNow stores ev in a transaction of its own and returns once it is
// durable: for events with no change of ours to commit with.
func (o *Outbox) EnqueueNow(ctx context.Context, ev Event) error {
	if !o.Enabled() {
		return nil
	}
	return o.opts.Batcher.Do(ctx, func(tx *sql.Tx) error { return o.Enqueue(ctx, tx, ev) })
}

// Pending is the number of events waiting for delivery.
func (o *Outbox) Pending(ctx context.Context) (int, error) {
	var n int
	err := o.opts.DB.QueryRowContext(ctx, `SELECT count(*) FROM webhook_outbox WHERE status = 'pending'`).Scan(&n)
	return n, err
}
