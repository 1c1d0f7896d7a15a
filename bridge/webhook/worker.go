package webhook

import (
	"context"
	"database/sql"
	"time"
)

// maxIdle is the longest the dispatcher sleeps without scanning; a safety
// net, since new events and ended deliveries wake it.
const maxIdle = 30 * time.Second

// row is one due event.
type row struct {
	id        int64
	webhookID string
	key       string
	payload   []byte
	attempts  int
	nextAt    int64
	expiresAt int64
}

// dueScan reads due rows after the cursor (next_attempt_at, id) that head
// their ordering key: no earlier row of the key is still pending. The
// backlog stays on disk; memory holds one page.
const dueScan = `SELECT o.id, o.webhook_id, o.ordering_key, o.payload, o.attempts, o.next_attempt_at, o.expires_at
	FROM webhook_outbox o
	WHERE o.status = 'pending' AND o.next_attempt_at <= ? AND (o.next_attempt_at, o.id) > (?, ?)
	  AND NOT EXISTS (SELECT 1 FROM webhook_outbox p WHERE p.status = 'pending' AND p.ordering_key = o.ordering_key AND p.id < o.id)
	ORDER BY o.next_attempt_at, o.id LIMIT ?`

// Run delivers due events until ctx ends. One dispatcher scans the table in
// pages and hands rows to Options.Workers workers, never two of one
// ordering key at a time.
func (o *Outbox) Run(ctx context.Context) error {
	if !o.Enabled() {
		<-ctx.Done()
		return nil
	}
	jobs := make(chan row)
	done := make(chan struct{})
	for range o.opts.Workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for r := range jobs {
				o.deliver(ctx, r)
			}
		}()
	}
	go func() {
		defer func() { done <- struct{}{} }()
		o.pruneLoop(ctx)
	}()
	o.dispatch(ctx, jobs)
	close(jobs)
	for range o.opts.Workers + 1 {
		<-done
	}
	return nil
}

func (o *Outbox) dispatch(ctx context.Context, jobs chan<- row) {
	// A sweep reads every row due at its start, page by page; rows due
	// later are left to the next sweep, which the timer or a wake starts.
	var cursorAt, cursorID, scanNow int64 = -1, 0, 0
	for ctx.Err() == nil {
		if cursorAt < 0 {
			o.beginScan()
			cursorAt, scanNow = 0, o.opts.Now().UnixMilli()
		}
		page, err := o.scan(ctx, scanNow, cursorAt, cursorID)
		if err != nil && ctx.Err() == nil {
			o.opts.Log.Error(err, "read due webhook events")
		}
		for _, r := range page {
			if !o.claim(r) {
				continue
			}
			select {
			case jobs <- r:
			case <-ctx.Done():
				return
			}
		}
		if len(page) == o.opts.PageSize {
			last := page[len(page)-1]
			cursorAt, cursorID = last.nextAt, last.id
			continue
		}
		cursorAt, cursorID = -1, 0 // swept to the end: start over when woken
		o.sleep(ctx, scanNow)
	}
}

// sleep waits for a new event, an ended delivery, the next due time, or
// ctx. A wake first waits for the write it announces to commit.
func (o *Outbox) sleep(ctx context.Context, scanNow int64) {
	timer := time.NewTimer(o.untilNextDue(ctx, scanNow))
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	case <-o.wake:
		// Enqueue signals from inside a Batcher transaction; an empty Do
		// returns once that transaction has committed.
		_ = o.opts.Batcher.Do(ctx, func(*sql.Tx) error { return nil })
	}
}

// nextHeadDue is when the earliest row that heads its key and was not yet
// due at the last sweep is due.
const nextHeadDue = `SELECT min(o.next_attempt_at) FROM webhook_outbox o WHERE o.status = 'pending' AND o.next_attempt_at > ?
	AND NOT EXISTS (SELECT 1 FROM webhook_outbox p WHERE p.status = 'pending' AND p.ordering_key = o.ordering_key AND p.id < o.id)`

// untilNextDue is how long to sleep after a sweep that read the rows due at
// scanNow. The heads it read but skipped have a delivery under way, or one
// that just ended: each end wakes the dispatcher, so only the rows that were
// not yet due need a timer.
func (o *Outbox) untilNextDue(ctx context.Context, scanNow int64) time.Duration {
	var next sql.NullInt64
	if err := o.opts.DB.QueryRowContext(ctx, nextHeadDue, scanNow).Scan(&next); err != nil || !next.Valid {
		return maxIdle
	}
	return min(max(time.UnixMilli(next.Int64).Sub(o.opts.Now()), 0), maxIdle)
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
		if err := rows.Scan(&r.id, &r.webhookID, &r.key, &r.payload, &r.attempts, &r.nextAt, &r.expiresAt); err != nil {
			return nil, err
		}
		page = append(page, r)
	}
	return page, rows.Err()
}
