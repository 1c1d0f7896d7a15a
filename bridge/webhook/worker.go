package webhook

import (
	"context"
	"database/sql"
	"time"

	"github.com/msgbridge/msgbridge/bridge/durable"
)

// maxIdle is the longest the dispatcher sleeps without scanning; a safety
// net, since new events and ended deliveries wake it.
const maxIdle = 30 * time.Second

// row is one due event.
type row struct {
	id           int64
	subscription string
	webhookID    string
	event        string
	key          string
	payload      []byte
	attempts     int
	nextAt       int64
	expiresAt    int64
}

// ofEnabled keeps the rows of the enabled subscriptions: a disabled one's
// events wait.
const ofEnabled = `o.subscription IN (SELECT id FROM webhook_subscriptions WHERE enabled = 1)
	  AND NOT EXISTS (SELECT 1 FROM webhook_outbox p WHERE p.status = 'pending' AND p.subscription = o.subscription
		AND p.ordering_key = o.ordering_key AND p.id < o.id)`

// dueScan reads due rows after the cursor (next_attempt_at, id) of the
// enabled subscriptions that head their ordering key in their
// subscription: no earlier row of the key is still pending for it. The
// backlog stays on disk; memory holds one page.
const dueScan = `SELECT o.id, o.subscription, o.webhook_id, o.event, o.ordering_key, o.payload, o.attempts, o.next_attempt_at, o.expires_at
	FROM webhook_outbox o
	WHERE o.status = 'pending' AND o.next_attempt_at <= ? AND (o.next_attempt_at, o.id) > (?, ?)
	  AND ` + ofEnabled + `
	ORDER BY o.next_attempt_at, o.id LIMIT ?`

// Run delivers due events until ctx ends. One dispatcher scans the table in
// pages and starts a delivery per row, never two of one subscription's
// ordering key at a time and at most Options.Workers per subscription: a
// subscription whose receiver hangs holds its own slots, never another's.
func (o *Outbox) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		o.pruneLoop(ctx)
	}()
	defer func() {
		o.running.Wait()
		<-done
	}()
	d := &dispatcher{o: o, cursorAt: -1}
	durable.Loop{
		Pass: d.pass, NextDue: d.nextDue, Wake: o.wake, MaxIdle: maxIdle, Clock: durable.ClockOf(o.opts.Now),
		// Enqueue notifies from inside a Batcher transaction; an empty Do
		// returns once that transaction has committed.
		Committed: func(ctx context.Context) { _ = o.opts.Batcher.Do(ctx, func(*sql.Tx) error { return nil }) },
	}.Run(ctx)
	return nil
}

// dispatcher is the scan's state: a scan reads every row due at its start
// (scanNow), page by page after the cursor; rows due later are left to the
// next scan, which the timer or a wake starts.
type dispatcher struct {
	o                           *Outbox
	cursorAt, cursorID, scanNow int64 // cursorAt < 0: no scan under way
	// rest are the rows of the page read last that waited for a slot
	// while every subscription had all its slots taken; restOf is the
	// subscriptions' generation they were read in.
	rest   []row
	restOf int64
}

// pass starts the rows left from the last page, or else the next page of
// due heads.
func (d *dispatcher) pass(ctx context.Context) durable.Pass {
	o := d.o
	if len(d.rest) > 0 && d.restOf == o.generation.Load() {
		rest := d.rest
		d.rest = nil
		if held, stopped := d.startAll(ctx, rest); stopped || d.cursorAt >= 0 {
			return durable.Pass{Held: held, More: !stopped}
		}
	}
	d.rest = nil
	if d.cursorAt < 0 {
		o.lanes.BeginScan()
		d.cursorAt, d.scanNow = 0, o.opts.Now().UnixMilli()
	}
	page, err := o.scan(ctx, d.scanNow, d.cursorAt, d.cursorID)
	if err != nil && ctx.Err() == nil {
		o.opts.Log.Error(err, "read due webhook events")
	}
	full := len(page) == o.opts.PageSize
	if full {
		last := page[len(page)-1]
		d.cursorAt, d.cursorID = last.nextAt, last.id
	} else {
		d.cursorAt, d.cursorID = -1, 0 // swept to the end: start over when woken
	}
	held, stopped := d.startAll(ctx, page)
	return durable.Pass{More: full && !stopped, Held: held}
}

// startAll starts the rows that find a slot and a free lane. When every
// subscription has all its slots taken it stops and keeps the rows not yet
// tried for the next pass: nothing starts before a delivery ends, and each
// end wakes the loop. Re-reading the due list at every end instead cost a
// query of a page per delivery.
func (d *dispatcher) startAll(ctx context.Context, rows []row) (held, stopped bool) {
	for i, r := range rows {
		if d.o.start(ctx, r) {
			continue
		}
		held = true
		if d.o.allBusy() {
			d.rest, d.restOf = rows[i:], d.o.generation.Load()
			return true, true
		}
	}
	return held, false
}

// allBusy reports whether every enabled subscription has all its slots
// taken.
func (o *Outbox) allBusy() bool {
	for _, l := range o.subscriptions().enabled {
		if st := o.state(l.ID); len(st.slots) < cap(st.slots) {
			return false
		}
	}
	return true
}

// start begins r's delivery unless its subscription's slots are all taken
// or its lane carries a delivery; it reports whether it did. Never
// blocking: a subscription whose receiver hangs must not hold the others'
// rows behind its own.
func (o *Outbox) start(ctx context.Context, r row) bool {
	l, ok := o.subscriptions().byID[r.subscription]
	if !ok || !l.Enabled {
		return false // changed since the scan read it
	}
	st := o.state(r.subscription)
	select {
	case st.slots <- struct{}{}:
	default:
		return false // the end of one of its deliveries wakes the loop
	}
	ln := lane{r.subscription, r.key}
	if !o.lanes.TryTake(ln, r.id) {
		<-st.slots
		return false
	}
	o.running.Add(1)
	go func() {
		defer o.running.Done()
		defer func() { <-st.slots }()
		o.deliver(ctx, l, r)
	}()
	return true
}

// nextHeadDue is when the earliest row that heads its key and was not yet
// due at the last scan is due.
const nextHeadDue = `SELECT min(o.next_attempt_at) FROM webhook_outbox o WHERE o.status = 'pending' AND o.next_attempt_at > ?
	AND ` + ofEnabled

// nextDue is when to scan again after a scan that read the rows due at
// scanNow. The heads it read but skipped have a delivery under way, or one
// that just ended: each end wakes the dispatcher, so only the rows that were
// not yet due need a timer.
func (d *dispatcher) nextDue(ctx context.Context) (time.Time, bool) {
	if len(d.rest) > 0 {
		return time.Time{}, false // every slot is taken: the end of a delivery wakes the loop
	}
	var next sql.NullInt64
	if err := d.o.opts.DB.QueryRowContext(ctx, nextHeadDue, d.scanNow).Scan(&next); err != nil || !next.Valid {
		return time.Time{}, false
	}
	return time.UnixMilli(next.Int64), true
}

func (o *Outbox) scan(ctx context.Context, now, afterAt, afterID int64) ([]row, error) {
	rows, err := o.opts.DB.QueryContext(ctx, dueScan, now, afterAt, afterID, o.opts.PageSize)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var page []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.subscription, &r.webhookID, &r.event, &r.key, &r.payload, &r.attempts, &r.nextAt, &r.expiresAt); err != nil {
			return nil, err
		}
		page = append(page, r)
	}
	return page, rows.Err()
}
