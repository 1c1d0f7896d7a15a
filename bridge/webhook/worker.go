package webhook

import (
	"context"
	"database/sql"
	"strconv"
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

// dueScanOf is the query that reads one subscription's due rows after the
// cursor (next_attempt_at, id), pageSize of them. Only the head of each
// ordering key is in the index webhook_due_of: the rows behind it (behind
// = 1) are not read until it ends, so a receiver that fails at once with a
// backlog in one chat costs a scan that chat's head, not a walk of the
// backlog; and another subscription's backlog costs it nothing. The
// backlog stays on disk; memory holds one page. The page size is written
// into the SQL, not bound: SQLite plans a statement again at every run
// when its LIMIT is a parameter, and a scan runs after every delivery.
func dueScanOf(pageSize int) string {
	return `SELECT o.id, o.subscription, o.webhook_id, o.event, o.ordering_key, o.payload, o.attempts, o.next_attempt_at, o.expires_at
	FROM webhook_outbox o
	WHERE o.subscription = ? AND o.status = 'pending' AND o.behind = 0 AND o.next_attempt_at <= ?
	  AND (o.next_attempt_at, o.id) > (?, ?)
	ORDER BY o.next_attempt_at, o.id LIMIT ` + strconv.Itoa(pageSize)
}

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
	d := &dispatcher{o: o}
	durable.Loop{
		Pass: d.pass, NextDue: d.nextDue, Wake: o.wake, MaxIdle: maxIdle, Clock: durable.ClockOf(o.opts.Now),
		// Enqueue notifies from inside a Batcher transaction; an empty Do
		// returns once that transaction has committed.
		Committed: func(ctx context.Context) { _ = o.opts.Batcher.Do(ctx, func(*sql.Tx) error { return nil }) },
	}.Run(ctx)
	return nil
}

// dispatcher is the scan's state: a scan reads, one subscription after
// another, every row due at its start (scanNow), page by page after the
// cursor; rows due later are left to the next scan, which the timer or a
// wake starts. A subscription whose slots are all taken is not read at
// all: nothing of it could start, and the end of one of its deliveries
// wakes the loop for a new scan. Reading every subscription's due rows in
// one scan made a hung receiver's growing backlog the cost of every other
// subscription's events.
type dispatcher struct {
	o                           *Outbox
	scanNow, cursorAt, cursorID int64
	// queue holds the subscriptions the scan under way has yet to read,
	// the first one from the cursor on; nil: every one was read.
	queue    []*live
	scanning bool
	// waiting are the rows of the scan that found their subscription's
	// slots all taken, by subscription; waitingOf is the subscriptions'
	// generation they were read in.
	waiting   map[string][]row
	waitingOf int64
}

// pass reads the next page of due heads and starts them; once the scan
// read every subscription, it starts the waiting rows as slots free up.
func (d *dispatcher) pass(ctx context.Context) durable.Pass {
	o := d.o
	if d.waitingOf != o.generation.Load() {
		d.waiting = nil // read under other subscriptions: read again
	}
	if d.scanning && d.queue == nil {
		if d.startWaiting(ctx) {
			// Every subscription is busy: nothing new could start before a
			// delivery ends, and each end wakes the loop. Re-reading the due
			// list at every end instead cost a query of a page per delivery.
			return durable.Pass{Held: true}
		}
		d.scanning, d.waiting = false, nil
	}
	if !d.scanning {
		o.lanes.BeginScan()
		d.scanning, d.scanNow, d.queue = true, o.opts.Now().UnixMilli(), o.subscriptions().enabled
		d.cursorAt, d.cursorID, d.waitingOf = 0, 0, o.generation.Load()
	}
	skipped := d.skipBusy()
	if len(d.queue) == 0 {
		d.queue = nil
		if len(d.waiting) > 0 {
			return durable.Pass{More: true, Held: true}
		}
		d.scanning = false // swept to the end: start over when woken
		return durable.Pass{Held: skipped}
	}
	return d.readPage(ctx, skipped)
}

// readPage reads and starts the next page of the scan's subscription.
func (d *dispatcher) readPage(ctx context.Context, skipped bool) durable.Pass {
	o, sub := d.o, d.queue[0].ID
	page, err := o.scan(ctx, sub, d.scanNow, d.cursorAt, d.cursorID)
	if err != nil && ctx.Err() == nil {
		o.opts.Log.Error(err, "read due webhook events")
	}
	left, held := d.startAll(ctx, page)
	switch {
	case len(left) > 0: // its slots are all taken: its later rows wait for the next scan
		if d.waiting == nil {
			d.waiting = map[string][]row{}
		}
		d.waiting[sub] = left
		d.nextSubscription()
	case len(page) == o.opts.PageSize:
		last := page[len(page)-1]
		d.cursorAt, d.cursorID = last.nextAt, last.id
	default:
		d.nextSubscription()
	}
	if d.queue == nil && len(d.waiting) == 0 {
		d.scanning = false // swept to the end: start over when woken
	}
	return durable.Pass{More: d.scanning, Held: held || skipped}
}

// startWaiting starts the waiting rows of the subscriptions with a free
// slot again; it reports whether every subscription is busy, so that the
// rest keep waiting.
func (d *dispatcher) startWaiting(ctx context.Context) (allBusy bool) {
	for id, rows := range d.waiting {
		if !d.o.canStart(id) {
			continue
		}
		if left, _ := d.startAll(ctx, rows); len(left) > 0 {
			d.waiting[id] = left
		} else {
			delete(d.waiting, id)
		}
	}
	return len(d.waiting) > 0 && d.o.allBusy()
}

// skipBusy moves the scan past the subscriptions that cannot start a
// delivery now (all slots taken, or no longer enabled); it reports whether
// it skipped any.
func (d *dispatcher) skipBusy() bool {
	skipped := false
	for len(d.queue) > 0 && !d.o.canStart(d.queue[0].ID) {
		d.nextSubscription()
		skipped = true
	}
	return skipped
}

func (d *dispatcher) nextSubscription() {
	d.queue = d.queue[1:]
	if len(d.queue) == 0 {
		d.queue = nil
	}
	d.cursorAt, d.cursorID = 0, 0
}

// startAll starts the rows, all of one subscription, that find a slot and
// a free lane. It returns the rows not yet tried once the subscription's
// slots are all taken, and whether any row was left (a lane under way:
// its end wakes the loop).
func (d *dispatcher) startAll(ctx context.Context, rows []row) (left []row, held bool) {
	for i, r := range rows {
		if d.o.start(ctx, r) {
			continue
		}
		held = true
		if d.o.slotsTaken(r.subscription) {
			return rows[i:], true
		}
	}
	return nil, held
}

// allBusy reports whether every enabled subscription has all its slots
// taken.
func (o *Outbox) allBusy() bool {
	for _, l := range o.subscriptions().enabled {
		if !o.slotsTaken(l.ID) {
			return false
		}
	}
	return true
}

// slotsTaken reports whether every slot of subscription id is taken.
func (o *Outbox) slotsTaken(id string) bool {
	st := o.state(id)
	return len(st.slots) == cap(st.slots)
}

// canStart reports whether subscription id is enabled and has a free slot.
func (o *Outbox) canStart(id string) bool {
	l, ok := o.subscriptions().byID[id]
	return ok && l.Enabled && !o.slotsTaken(id)
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
		free := o.slotFreer(st)
		defer free()
		o.deliver(ctx, l, r, free)
	}()
	return true
}

// nextHeadDue is when the earliest head of a subscription that was not
// yet due at the last scan is due.
const nextHeadDue = `SELECT o.next_attempt_at FROM webhook_outbox o
	WHERE o.subscription = ? AND o.status = 'pending' AND o.behind = 0 AND o.next_attempt_at > ?
	ORDER BY o.next_attempt_at, o.id LIMIT 1`

// nextDue is when to scan again after a scan that read the rows due at
// scanNow. The heads it read but skipped have a delivery under way, or one
// that just ended: each end wakes the dispatcher, so only the rows that were
// not yet due need a timer, and only of the subscriptions with a free slot
// (a busy one's end wakes the loop).
func (d *dispatcher) nextDue(ctx context.Context) (time.Time, bool) {
	if len(d.waiting) > 0 {
		return time.Time{}, false // every slot is taken: the end of a delivery wakes the loop
	}
	var next int64
	found := false
	for _, l := range d.o.subscriptions().enabled {
		if d.o.slotsTaken(l.ID) {
			continue
		}
		var at int64
		if err := d.o.stmts.ReadRow(ctx, nextHeadDue, l.ID, d.scanNow).Scan(&at); err != nil {
			continue // none waits (or the read failed: the safety net's MaxIdle bounds the sleep)
		}
		if !found || at < next {
			next, found = at, true
		}
	}
	return time.UnixMilli(next), found
}

func (o *Outbox) scan(ctx context.Context, subscription string, now, afterAt, afterID int64) ([]row, error) {
	// Prepared once: a scan follows every delivery's end.
	rows, err := o.stmts.Read(ctx, o.dueScan, subscription, now, afterAt, afterID)
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
	o.rowsRead.Add(int64(len(page)))
	return page, rows.Err()
}
