package sendqueue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// A status post reaches every recipient it names for the price of one
// message, so its audience is paced on its own (DESIGN 12):
//
//   - every recipient is checked like the number of a message: an answer
//     the contact book holds (a number the account checked or talked to
//     within a day) is free, any other is a question to WhatsApp charged to
//     CHECK_RATE; numbers not on WhatsApp leave the audience, and a status
//     with nobody left fails with not_on_whatsapp;
//   - the audience is charged to STATUS_AUDIENCE_RATE (recipients per
//     hour, a burst of at least one full audience): a status beyond it
//     waits, Queued, until its recipients fit.
//
// Neither wait spends the message's attempts or retries (a deferral).

// deferral is an attempt that did not happen: the message is due again at
// until, with its attempts and retries as they were.
type deferral struct {
	until  time.Time
	reason string
}

func (d *deferral) Error() string {
	return fmt.Sprintf("%s; due again at %s", d.reason, bridge.FormatTime(d.until))
}

// deferredUntil is when a deferred message is due again.
func deferredUntil(err error) (time.Time, bool) {
	var d *deferral
	if errors.As(err, &d) {
		return d.until, true
	}
	return time.Time{}, false
}

// audienceBudget is STATUS_AUDIENCE_RATE as a token bucket whose burst holds
// at least the largest audience, so that every status can be sent.
func audienceBudget(rate bridge.SendRate) *bridge.Budget {
	if rate.N == 0 {
		return nil
	}
	return bridge.NewBudget(rate, max(rate.N, bridge.MaxStatusRecipients))
}

// prepareAudience narrows a status's audience to the recipients on
// WhatsApp and charges it to the audience budget.
func (q *Queue) prepareAudience(ctx context.Context, post *bridge.StatusPost) error {
	kept := make([]bridge.Recipient, 0, len(post.Recipients))
	for _, r := range post.Recipients {
		err := q.checkRecipient(ctx, r)
		if wait, limited := bridge.RetryAfterOf(err); limited {
			return &deferral{until: q.now().Add(wait), reason: "the status's audience waits for CHECK_RATE"}
		}
		switch {
		case errors.Is(err, bridge.ErrNotOnWhatsApp):
			continue
		case err != nil:
			return err
		}
		kept = append(kept, r)
	}
	if len(kept) == 0 {
		return bridge.ErrNotOnWhatsApp
	}
	if q.audience != nil {
		if wait, ok := q.audience.ReserveN(q.now(), len(kept), 0); !ok {
			return &deferral{until: q.now().Add(wait), reason: fmt.Sprintf("the status's %d recipients wait for STATUS_AUDIENCE_RATE", len(kept))}
		}
	}
	post.Recipients = kept
	return nil
}

const deferMessage = `UPDATE messages SET next_attempt_at = ?, updated_at = ? WHERE id = ? AND status = 'Queued'`

// deferAttempt records that m's attempt did not happen: m stays Queued with
// its attempts and retries, due again at until.
func (q *Queue) deferAttempt(ctx context.Context, m *row, until time.Time, why error) {
	now := q.now()
	bg := context.WithoutCancel(ctx)
	err := q.batcher.Do(bg, func(tx *sql.Tx) error {
		_, err := q.stmts.Exec(bg, tx, deferMessage, until.UnixMilli(), now.UnixMilli(), m.ID)
		return err
	})
	if err != nil {
		q.logger.Error(err, "record a deferred attempt", "message", m.ID)
		return
	}
	m.UpdatedAt = now
	m.nextAttempt = sql.NullInt64{Int64: until.UnixMilli(), Valid: true}
	q.logger.V(1).Info("attempt deferred", "message", m.ID, "why", why.Error())
	q.wake.Notify()
}
