package webhook

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Subscription errors; the API maps them to 404 and 409.
var (
	ErrNoSubscription     = errors.New("no such subscription")
	ErrSubscriptionExists = errors.New("a subscription of this id exists")
	ErrManaged            = errors.New("the subscription default is WEBHOOK_URL's: change the settings")
)

// live is a subscription as the outbox runs it: its settings, its format
// and the sender that reaches its target.
type live struct {
	Subscription
	format Format
	sender sender
}

// subSet is one snapshot of the subscriptions; a change replaces it whole.
type subSet struct {
	byID    map[string]*live
	enabled []*live // ordered by id
}

// runState is what outlives a snapshot: the deliveries under way and the
// last outcomes of one subscription.
type runState struct {
	slots            chan struct{} // one per delivery under way; cap Options.Workers
	mu               sync.Mutex
	lastOK, lastFail time.Time
	lastErr          string
}

// subscriptions returns the current snapshot.
func (o *Outbox) subscriptions() *subSet { return o.subs.Load() }

// state is subscription id's runState, made on first use.
func (o *Outbox) state(id string) *runState {
	o.statesMu.Lock()
	defer o.statesMu.Unlock()
	st, ok := o.states[id]
	if !ok {
		st = &runState{slots: make(chan struct{}, o.opts.Workers)}
		o.states[id] = st
	}
	return st
}

func (st *runState) record(ok bool, at time.Time, cause error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if ok {
		st.lastOK = at
		return
	}
	st.lastFail, st.lastErr = at, truncate(cause.Error())
}

const selectSubscriptions = `SELECT id, target, events, format, secret, credentials, headers, enabled, created_at, updated_at
	FROM webhook_subscriptions ORDER BY id`

// reload reads the subscriptions and makes them the snapshot the outbox
// runs, keeping the senders of the ones whose target is unchanged. Every
// change calls it once its transaction committed: it takes effect at once.
func (o *Outbox) reload(ctx context.Context) error {
	o.reloadMu.Lock()
	defer o.reloadMu.Unlock()
	all, err := o.readSubscriptions(ctx)
	if err != nil {
		return err
	}
	old := o.subscriptions()
	next := &subSet{byID: map[string]*live{}}
	for _, s := range all {
		l, err := o.liveOf(s, old)
		if err != nil {
			o.opts.Log.Error(err, "subscription not started", "subscription", s.ID)
			continue
		}
		next.byID[s.ID] = l
		if s.Enabled {
			next.enabled = append(next.enabled, l)
		}
	}
	o.subs.Store(next)
	o.generation.Add(1)
	if old != nil {
		for id, l := range old.byID {
			if n, ok := next.byID[id]; !ok || n.sender != l.sender {
				l.sender.close()
			}
		}
	}
	o.wake.Notify() // a subscription enabled again has rows due
	return nil
}

// liveOf is s ready to run, with the sender of its previous snapshot when
// its target and credentials are the same.
func (o *Outbox) liveOf(s Subscription, old *subSet) (*live, error) {
	f, err := formatOf(s.Format)
	if err != nil {
		return nil, err
	}
	l := &live{Subscription: s, format: f}
	if old != nil {
		if p, ok := old.byID[s.ID]; ok && p.Target == s.Target && p.Credentials == s.Credentials {
			l.sender = p.sender
			return l, nil
		}
	}
	l.sender, err = o.newSender(s)
	return l, err
}

func (o *Outbox) readSubscriptions(ctx context.Context) ([]Subscription, error) {
	rows, err := o.opts.DB.QueryContext(ctx, selectSubscriptions)
	if err != nil {
		return nil, fmt.Errorf("read subscriptions: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var out []Subscription
	for rows.Next() {
		s, err := scanSubscription(rows)
		if err != nil {
			return nil, fmt.Errorf("read subscriptions: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func scanSubscription(rows *sql.Rows) (Subscription, error) {
	var (
		s                          Subscription
		events, secret, creds, hdr string
		created, updated           int64
	)
	err := rows.Scan(&s.ID, &s.Target, &events, &s.Format, &secret, &creds, &hdr, &s.Enabled, &created, &updated)
	if err != nil {
		return s, err
	}
	if events != "" {
		s.Events = strings.Split(events, ",")
	}
	if s.Secret, err = base64.StdEncoding.DecodeString(secret); err != nil {
		return s, err
	}
	if creds != "" {
		if err := json.Unmarshal([]byte(creds), &s.Credentials); err != nil {
			return s, err
		}
	}
	if err := json.Unmarshal([]byte(hdr), &s.Headers); err != nil {
		return s, err
	}
	s.CreatedAt, s.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return s, nil
}

const upsertSubscription = `INSERT INTO webhook_subscriptions
	(id, target, events, format, secret, credentials, headers, enabled, created_at, updated_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (id) DO UPDATE SET target = excluded.target, events = excluded.events, format = excluded.format,
		secret = excluded.secret, credentials = excluded.credentials, headers = excluded.headers,
		enabled = excluded.enabled, updated_at = excluded.updated_at`

// write stores s in tx, created or replaced.
func (o *Outbox) write(ctx context.Context, tx *sql.Tx, s Subscription) error {
	var creds []byte
	if s.Credentials.Set() {
		// Stored in the encrypted bridge.db, never answered nor logged.
		creds, _ = json.Marshal(s.Credentials) //nolint:gosec // strings only: cannot fail
	}
	hdr, _ := json.Marshal(nonNil(s.Headers)) // strings only: cannot fail
	now := o.opts.Now().UnixMilli()
	_, err := tx.ExecContext(ctx, upsertSubscription, s.ID, s.Target, strings.Join(s.Events, ","), s.Format,
		base64.StdEncoding.EncodeToString(s.Secret), string(creds), string(hdr), s.Enabled, now, now)
	return err
}

func nonNil(h map[string]string) map[string]string {
	if h == nil {
		return map[string]string{}
	}
	return h
}

// syncDefault makes the subscription default what WEBHOOK_URL and
// WEBHOOK_SECRET say: written when the URL is set, disabled (its backlog
// kept) when it is not.
func (o *Outbox) syncDefault(ctx context.Context) error {
	return o.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		if o.opts.URL == "" {
			_, err := tx.ExecContext(ctx, `UPDATE webhook_subscriptions SET enabled = 0 WHERE id = ?`, DefaultSubscription)
			return err
		}
		return o.write(ctx, tx, Subscription{
			ID: DefaultSubscription, Target: o.opts.URL, Format: FormatStandard, Secret: o.opts.Key, Enabled: true,
		})
	})
}

// Create stores a new subscription, after validating it and probing its
// target. ErrSubscriptionExists when its id is taken.
func (o *Outbox) Create(ctx context.Context, s Subscription) error {
	if s.ID == DefaultSubscription {
		return ErrManaged
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if _, err := o.Get(ctx, s.ID); err == nil {
		return ErrSubscriptionExists
	}
	if err := o.probe(ctx, s); err != nil {
		return err
	}
	err := o.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM webhook_subscriptions WHERE id = ?`, s.ID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return ErrSubscriptionExists
		}
		return o.write(ctx, tx, s)
	})
	if err != nil {
		return err
	}
	return o.reload(ctx)
}

// Put validates s, then creates it or replaces the subscription of its id; it reports
// whether it created it. Replacing keeps the delivery state unless the
// target changes: then the events pending for the old target are dropped
// and the new one starts from now. A new or changed target is probed
// first.
func (o *Outbox) Put(ctx context.Context, s Subscription) (created bool, err error) {
	if s.ID == DefaultSubscription {
		return false, ErrManaged
	}
	if err := s.Validate(); err != nil {
		return false, err
	}
	prior, getErr := o.Get(ctx, s.ID)
	created = errors.Is(getErr, ErrNoSubscription)
	if getErr != nil && !created {
		return false, getErr
	}
	moved := !created && prior.Target != s.Target
	if created || moved || prior.Credentials != s.Credentials {
		if err := o.probe(ctx, s); err != nil {
			return false, err
		}
	}
	err = o.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		if moved {
			if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_outbox WHERE subscription = ? AND status = 'pending'`, s.ID); err != nil {
				return err
			}
		}
		return o.write(ctx, tx, s)
	})
	if err != nil {
		return false, err
	}
	return created, o.reload(ctx)
}

// Delete removes subscription id with its events; it reports whether it
// existed. Deleting an absent one is no error.
func (o *Outbox) Delete(ctx context.Context, id string) (bool, error) {
	if id == DefaultSubscription {
		return false, ErrManaged
	}
	var existed bool
	err := o.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_subscriptions WHERE id = ?`, id)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		existed = n > 0
		_, err = tx.ExecContext(ctx, `DELETE FROM webhook_outbox WHERE subscription = ?`, id)
		return err
	})
	if err != nil {
		return false, err
	}
	return existed, o.reload(ctx)
}
