package webhook

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
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
// answer, or a NATS PubAck) and every event that became a dead letter, per
// subscription; *metrics.Metrics is one.
type Observer interface {
	WebhookDelivery(subscription string, delivered bool)
	WebhookDeadLetter(subscription string)
}

// Options configures the outbox.
type Options struct {
	DB *sql.DB
	// Batcher is DB's one writer. Every transaction given to Enqueue must be
	// one of its transactions: the worker waits on it to see a new row.
	Batcher *sqlite.Batcher
	// URL is the subscription default's target (WEBHOOK_URL); empty
	// disables it. The other subscriptions are in bridge.db.
	URL string
	// Key is the decoded whsec_ secret of default; empty: unsigned.
	Key []byte
	// Workers bounds the concurrent deliveries of one subscription
	// (default 8); subscriptions never share them, so a slow receiver
	// holds only its own.
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
	// Probe, when set, replaces the check of a new target (tests of
	// targets that cannot exist here).
	Probe func(ctx context.Context, s Subscription) error
	// Account names the linked account in NATS subjects: the phone's
	// digits, empty while unlinked.
	Account func() string
	// LocalTargets admits targets on loopback and link-local addresses
	// (WEBHOOK_LOCAL_TARGETS=on: a receiver beside the bridge in its pod,
	// the tests' receivers). Off, a connection to one is refused after the
	// name resolved, so no subscription reaches the pod's own ports or the
	// cloud's metadata service.
	LocalTargets bool
	// KeepDelivered is how long a delivered row stays in the outbox
	// (DELIVERED_RETENTION; DefaultKeepDelivered when zero); KeepEvents how
	// long the event log keeps an event (EVENT_LOG_RETENTION;
	// DefaultKeepEvents when zero), which bounds how far back GET
	// /api/events resumes.
	KeepDelivered, KeepEvents time.Duration
}

// Outbox stores events and delivers them (Run).
type Outbox struct {
	opts  Options
	stmts *sqlite.Statements
	// dueScan is dueScanOf(opts.PageSize).
	dueScan string
	wake    *durable.Signal
	// lanes: one delivery under way per subscription and ordering key;
	// never a row ended since the current scan began.
	lanes durable.Lanes[lane, int64]
	// subs is the snapshot of the subscriptions every part reads; reload
	// replaces it under reloadMu.
	subs     atomic.Pointer[subSet]
	reloadMu sync.Mutex
	statesMu sync.Mutex
	states   map[string]*runState
	// running counts the deliveries under way, for Run's end.
	running sync.WaitGroup
	// generation counts the snapshots of the subscriptions: rows read
	// under an older one are read again.
	generation atomic.Int64
	// published wakes the readers of the event log.
	published published
	// rowsRead counts the due rows the scans read: what a scan costs, which
	// a receiver's backlog must not grow for another's events.
	rowsRead atomic.Int64
}

// lane is an ordering key of one subscription.
type lane struct{ subscription, key string }

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
	if opts.KeepDelivered <= 0 {
		opts.KeepDelivered = DefaultKeepDelivered
	}
	if opts.KeepEvents <= 0 {
		opts.KeepEvents = DefaultKeepEvents
	}
	o := &Outbox{
		opts: opts, stmts: sqlite.NewStatements(opts.DB), dueScan: dueScanOf(opts.PageSize), wake: durable.NewSignal(),
		states: map[string]*runState{},
	}
	var client http.Client
	if opts.Client != nil {
		client = *opts.Client
	} else {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = opts.Workers // keep one connection per worker alive
		tr.DialContext = o.dialer().DialContext
		client = http.Client{Timeout: opts.Timeout, Transport: tr}
	}
	client.CheckRedirect = refuseRedirects // whatever the caller's client does
	o.opts.Client = &client
	o.subs.Store(&subSet{byID: map[string]*live{}})
	ctx := context.Background()
	if err := o.syncDefault(ctx); err != nil {
		o.opts.Log.Error(err, "store the subscription default (WEBHOOK_URL)")
	}
	if err := o.reload(ctx); err != nil {
		o.opts.Log.Error(err, "read the subscriptions")
	}
	return o
}

// Enabled reports whether any subscription takes events.
func (o *Outbox) Enabled() bool { return o != nil && len(o.subscriptions().enabled) > 0 }

// Subscribed reports whether subscription id exists and whether it is
// enabled.
func (o *Outbox) Subscribed(id string) (exists, enabled bool) {
	l, ok := o.subscriptions().byID[id]
	return ok, ok && l.Enabled
}

// storeRow stores an event for one subscription, due now: ?1
// subscription, ?2 webhook_id, ?3 event, ?4 payload, ?5 ordering_key, ?6
// rank, ?7 next_attempt_at, ?8 expires_at, ?9 created_at. A row stored
// while its key has a pending row waits behind it (behind = 1), outside
// the due index, until that row ends; the database's triggers then make it
// the head. VALUES, not a SELECT: an INSERT that selects from its own
// table has SQLite copy the selection into a temporary table first, which
// doubled the cost of a row.
const storeRow = `INSERT INTO webhook_outbox (subscription, webhook_id, event, payload, ordering_key, rank, next_attempt_at,
		expires_at, created_at, behind)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, EXISTS (SELECT 1 FROM webhook_outbox
		WHERE subscription = ?1 AND ordering_key = ?5 AND status = 'pending'))`

const maxRankOfKey = `SELECT coalesce(max(rank), 0) FROM webhook_outbox WHERE subscription = ? AND ordering_key = ?`

// Enqueue stores ev in tx, a transaction of Options.Batcher, so that the
// event commits together with the change that causes it: one row for every
// enabled subscription that takes its type, and one in the event log that
// GET /api/events streams.
func (o *Outbox) Enqueue(ctx context.Context, tx *sql.Tx, ev Event) error {
	if ev.ID == "" {
		ev.ID = NewID()
	}
	body, err := json.Marshal(ev.Payload)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", ev.Type, err)
	}
	if err := o.log(ctx, tx, ev, body); err != nil {
		return err
	}
	for _, l := range o.subscriptions().enabled {
		if !l.Takes(ev.Type) {
			continue
		}
		if ev.Rank > 0 {
			var top int
			if err := o.stmts.QueryRow(ctx, tx, maxRankOfKey, l.ID, ev.Key).Scan(&top); err != nil {
				return fmt.Errorf("webhook %s: %w", ev.Type, err)
			}
			if top >= ev.Rank {
				continue // a later status of this message is already queued
			}
		}
		if _, err := o.insert(ctx, tx, storeRow, l.ID, ev, body); err != nil {
			return err
		}
	}
	return nil
}

// NewID returns a new webhook-id, for an event whose id must be known
// before it is enqueued.
func NewID() string { return "msg_" + uuid.Must(uuid.NewV7()).String() }

// insert runs query, a storeRow, for ev with its JSON body, due now for
// subscription; it reports whether a row was inserted.
func (o *Outbox) insert(ctx context.Context, tx *sql.Tx, query, subscription string, ev Event, body []byte) (bool, error) {
	now := o.opts.Now().UnixMilli()
	res, err := o.stmts.Exec(ctx, tx, query, subscription, ev.ID, ev.Type, body, ev.Key, ev.Rank, now,
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
	dropEnded       = `DELETE FROM webhook_outbox WHERE subscription = ? AND webhook_id = ? AND status <> 'pending'`
	insertUnlessSet = storeRow + ` ON CONFLICT (subscription, webhook_id) DO NOTHING`
)

// Requeue stores ev again under its ID (which it must have), in tx, due
// now with a new retry window: a replay. It reports whether it did. An
// event of that ID that is still pending is left as it is (it is going to
// be delivered; a second row would deliver it twice); a delivered or dead
// row of it is replaced, so that the replay comes after the events of its
// key already pending. Rank plays no part: a replay is asked for. It goes
// to subscription only, or, when that is empty, to every enabled
// subscription that takes the event; it reports whether any row was
// stored.
func (o *Outbox) Requeue(ctx context.Context, tx *sql.Tx, ev Event, subscription string) (bool, error) {
	if ev.ID == "" {
		return false, fmt.Errorf("webhook %s: requeue of an event without its id", ev.Type)
	}
	body, err := json.Marshal(ev.Payload)
	if err != nil {
		return false, fmt.Errorf("webhook %s: %w", ev.Type, err)
	}
	stored := false
	for _, l := range o.subscriptions().enabled {
		if (subscription != "" && l.ID != subscription) || !l.Takes(ev.Type) {
			continue
		}
		if _, err := o.stmts.Exec(ctx, tx, dropEnded, l.ID, ev.ID); err != nil {
			return false, fmt.Errorf("webhook %s: %w", ev.Type, err)
		}
		ok, err := o.insert(ctx, tx, insertUnlessSet, l.ID, ev, body)
		if err != nil {
			return false, err
		}
		stored = stored || ok
	}
	return stored, nil
}

// EnqueueNow stores ev in a transaction of its own and returns once it is
// durable: for events with no change of ours to commit with.
func (o *Outbox) EnqueueNow(ctx context.Context, ev Event) error {
	return o.opts.Batcher.Do(ctx, func(tx *sql.Tx) error { return o.Enqueue(ctx, tx, ev) })
}

const countPending = `SELECT count(*) FROM webhook_outbox WHERE status = 'pending'`

// Pending is the number of events waiting for delivery: the gauge every
// scrape of /metrics reads.
func (o *Outbox) Pending(ctx context.Context) (int, error) {
	var n int
	err := o.stmts.ReadRow(ctx, countPending).Scan(&n)
	return n, err
}
