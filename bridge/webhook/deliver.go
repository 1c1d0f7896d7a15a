package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// maxErrorLen bounds last_error; a receiver's error page can be large.
const maxErrorLen = 512

// maxCarried bounds the events of one ordering key a delivery carries in
// a row before it hands its slot back to the scan, which serves the other
// keys' heads by age.
const maxCarried = 32

// deliver sends r to its subscription l and records the outcome; while the
// receiver accepts, it then carries the next events of r's ordering key,
// each sent once the one before was accepted, while the one before's mark
// is committed in the background. Waiting for each commit before the key's
// next send held one chat (a busy group) to one event per commit of
// bridge.db, which the incoming messages share. A failed attempt's retry is
// committed before anything else of the key goes, so it keeps its place.
// The lane is freed once every carried outcome is committed.
//
// answered runs once the receiver has answered r, before the outcome is
// written: it frees the slot, so that the subscription's next request does
// not wait for this one's commit. A carried event takes a free slot of its
// own, or is left to the scan.
func (o *Outbox) deliver(ctx context.Context, l *live, r row, answered func()) {
	ln := lane{r.subscription, r.key}
	var marks []pendingMark
	defer func() {
		o.awaitMarks(marks)
		for _, m := range marks {
			o.lanes.Done(ln, m.row.id) // its outcome is committed: the key's next event may go
		}
		o.wake.Notify()
	}()
	for {
		mark, accepted := o.attempt(ctx, l, r, answered)
		marks = append(marks, pendingMark{row: r, committed: mark})
		if !accepted || len(marks) == maxCarried {
			return
		}
		next, ok := o.nextOfKey(ctx, r)
		if !ok {
			return
		}
		if answered, ok = o.takeSlot(r.subscription); !ok {
			return
		}
		r = next
	}
}

// pendingMark is a carried event and the commit of its outcome (nil when
// committed already).
type pendingMark struct {
	row       row
	committed <-chan error
}

// awaitMarks waits for the carried outcomes' commits; a failed one leaves
// its row due, and it is posted again (same webhook-id).
func (o *Outbox) awaitMarks(marks []pendingMark) {
	for _, m := range marks {
		if m.committed == nil {
			continue
		}
		if err := <-m.committed; err != nil {
			o.opts.Log.Error(err, "record webhook delivery", "webhook_id", m.row.webhookID)
		}
	}
}

// attempt sends r once and records the outcome: a delivery's mark goes to
// the writer and its commit is returned (accepted); a failure's retry or
// dead letter is committed before attempt returns.
func (o *Outbox) attempt(ctx context.Context, l *live, r row, answered func()) (mark <-chan error, accepted bool) {
	now := o.opts.Now()
	a, err := o.send(ctx, l, r, now)
	answered()
	if ctx.Err() != nil {
		return nil, false // shutting down: the row stays due and is sent again after a restart
	}
	ok := err == nil && a.status >= 200 && a.status < 300
	if !ok && err == nil {
		err = a.failure()
	}
	o.state(r.subscription).record(ok, o.opts.Now(), err)
	if o.opts.Observer != nil {
		o.opts.Observer.WebhookDelivery(r.subscription, ok)
	}
	bg := context.WithoutCancel(ctx)
	if ok {
		return o.opts.Batcher.Submit(bg, func(tx *sql.Tx) error {
			_, err := o.stmts.Exec(bg, tx, markDelivered, r.attempts+1, o.opts.Now().UnixMilli(), r.id)
			return err
		}), true
	}
	if err := o.recordFailure(bg, r, a, err); err != nil {
		// The row stays as it was: due, and posted again (same webhook-id).
		o.opts.Log.Error(err, "record webhook delivery", "webhook_id", r.webhookID)
	}
	return nil, false
}

// nextOfKeyWhere reads the event after a carried one in its ordering key:
// it waits behind it (behind = 1) until the carried one's mark commits,
// and heads the key (behind = 0) once it has, so both are read, each on
// its index. behind is written into the SQL: a bound value that decides
// whether a partial index applies has SQLite plan the statement again at
// every run.
func nextOfKeyWhere(behind string) string {
	return `SELECT o.id, o.subscription, o.webhook_id, o.event, o.ordering_key, o.payload, o.attempts, o.next_attempt_at, o.expires_at
	FROM webhook_outbox o
	WHERE o.subscription = ? AND o.ordering_key = ? AND o.status = 'pending' AND o.behind = ` + behind + ` AND o.id > ?
	ORDER BY o.id LIMIT 1`
}

var nextOfKeyQueries = [...]string{nextOfKeyWhere("1"), nextOfKeyWhere("0")}

// nextOfKey reads the event that follows r in its ordering key, if one is
// due.
func (o *Outbox) nextOfKey(ctx context.Context, r row) (row, bool) {
	var next row
	found := false
	for _, query := range nextOfKeyQueries {
		var c row
		err := o.stmts.ReadRow(ctx, query, r.subscription, r.key, r.id).Scan(
			&c.id, &c.subscription, &c.webhookID, &c.event, &c.key, &c.payload, &c.attempts, &c.nextAt, &c.expiresAt)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			o.opts.Log.Error(err, "read the next webhook event of a chat")
			return row{}, false // the scan finds it
		}
		if !found || c.id < next.id {
			next, found = c, true
		}
	}
	return next, found && next.nextAt <= o.opts.Now().UnixMilli()
}

// takeSlot takes a free slot of the subscription for a carried event,
// never waiting.
func (o *Outbox) takeSlot(subscription string) (free func(), ok bool) {
	st := o.state(subscription)
	select {
	case st.slots <- struct{}{}:
		return o.slotFreer(st), true
	default:
		return nil, false
	}
}

// slotFreer gives a taken slot of st back, once however often it is called.
func (o *Outbox) slotFreer(st *runState) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			<-st.slots
			o.wake.Notify() // a waiting row of the subscription may start
		})
	}
}

// answer is what the receiver said to one attempt.
type answer struct {
	status     int
	retryAfter string // the Retry-After header
	location   string // the Location header of a redirect
}

// failure is the last_error of an answer other than 2xx.
func (a answer) failure() error {
	if a.status >= 300 && a.status < 400 {
		// Following would post the event elsewhere (or, after a 301-303,
		// turn it into a GET without body) and count that as delivered.
		return fmt.Errorf("receiver answered %d, a redirect to %q, which is not followed: set the target to the final address",
			a.status, a.location)
	}
	return fmt.Errorf("receiver answered %d", a.status)
}

// refuseRedirects is the client's CheckRedirect: the 3xx is the answer.
func refuseRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// send makes one attempt, bounded by Options.Timeout.
func (o *Outbox) send(ctx context.Context, l *live, r row, now time.Time) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, o.opts.Timeout)
	defer cancel()
	a, err := l.sender.send(ctx, l, Stored{ID: r.webhookID, Type: r.event, Payload: r.payload}, now)
	if errors.Is(err, ErrNoShape) {
		// Nothing to tell this receiver: the event is done for it.
		return answer{status: http.StatusNoContent}, nil
	}
	return a, err
}

const (
	markDelivered = `UPDATE webhook_outbox SET status = 'delivered', attempts = ?, last_error = '', delivered_at = ?
		WHERE id = ? AND status = 'pending'`
	markRetry = `UPDATE webhook_outbox SET attempts = ?, last_error = ?, next_attempt_at = ?
		WHERE id = ? AND status = 'pending'`
	markDead = `UPDATE webhook_outbox SET status = 'dead', attempts = ?, last_error = ?
		WHERE id = ? AND status = 'pending'`
	// markExpiredBehind makes dead letters of the events of the head's
	// chat (subscription and ordering key) whose window has passed while
	// they waited behind it: each would otherwise take one attempt (a
	// hung receiver's timeout) to learn what the clock says.
	markExpiredBehind = `UPDATE webhook_outbox SET status = 'dead', last_error = ?
		WHERE subscription = ? AND ordering_key = ? AND status = 'pending' AND expires_at <= ? AND id <> ?`
)

// recordFailure counts the attempt and schedules r's next one, or makes it a
// dead letter when that attempt would fall after its retry window.
func (o *Outbox) recordFailure(ctx context.Context, r row, a answer, cause error) error {
	now := o.opts.Now()
	attempts := r.attempts + 1
	next := now.Add(retryDelay(attempts, jitter(), a.status, a.retryAfter, now)).UnixMilli()
	msg := truncate(cause.Error())
	dead := next > r.expiresAt
	var deadCount int64
	err := o.opts.Batcher.Do(ctx, func(tx *sql.Tx) error {
		if !dead {
			_, err := o.stmts.Exec(ctx, tx, markRetry, attempts, msg, next, r.id)
			return err
		}
		if _, err := o.stmts.Exec(ctx, tx, markDead, attempts, msg, r.id); err != nil {
			return err
		}
		behind := truncate("expired waiting behind " + r.webhookID + ", a dead letter: " + msg)
		res, err := o.stmts.Exec(ctx, tx, markExpiredBehind, behind, r.subscription, r.key, now.UnixMilli(), r.id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		deadCount = 1 + n
		return err
	})
	if err == nil && o.opts.Observer != nil {
		for range deadCount {
			o.opts.Observer.WebhookDeadLetter(r.subscription)
		}
	}
	return err
}

// truncate bounds an error for last_error.
func truncate(msg string) string {
	if len(msg) > maxErrorLen {
		return msg[:maxErrorLen]
	}
	return msg
}
