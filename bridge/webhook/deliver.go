package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// maxErrorLen bounds last_error; a receiver's error page can be large.
const maxErrorLen = 512

// deliver sends r to its subscription l once and records the outcome.
// answered runs once the receiver has answered, before the outcome is
// written: it frees the slot, so that the subscription's next request
// does not wait for this one's commit (a slot held through the commit
// made the group commit carry at most Workers outcomes, and the commits
// bound the rate). r's lane stays taken until the outcome is committed:
// its key's next event still waits for it.
func (o *Outbox) deliver(ctx context.Context, l *live, r row, answered func()) {
	defer func() {
		// Its outcome is committed: the key's next event may go.
		o.lanes.Done(lane{r.subscription, r.key}, r.id)
		o.wake.Notify()
	}()
	now := o.opts.Now()
	a, err := o.send(ctx, l, r, now)
	answered()
	if ctx.Err() != nil {
		return // shutting down: the row stays due and is sent again after a restart
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
	var recordErr error
	if ok {
		recordErr = o.opts.Batcher.Do(bg, func(tx *sql.Tx) error {
			_, err := o.stmts.Exec(bg, tx, markDelivered, r.attempts+1, o.opts.Now().UnixMilli(), r.id)
			return err
		})
	} else {
		recordErr = o.recordFailure(bg, r, a, err)
	}
	if recordErr != nil {
		// The row stays as it was: due, and posted again (same webhook-id).
		o.opts.Log.Error(recordErr, "record webhook delivery", "webhook_id", r.webhookID)
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
