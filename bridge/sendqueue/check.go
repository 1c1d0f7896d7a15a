package sendqueue

import (
	"context"
	"database/sql"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Checker tells whether a phone number is on WhatsApp (whatsapp.ContactBook,
// which caches the answers, so that a burst to one number asks once).
type Checker interface {
	Contact(ctx context.Context, number string) (bridge.Contact, error)
}

// checkRecipient fails a message to a phone number that is not on WhatsApp
// with bridge.ErrNotOnWhatsApp, a permanent failure; a check that could not
// be made fails the attempt like a send would, so it is retried. Groups and
// LIDs are addresses WhatsApp gave, so they need no check.
func (q *Queue) checkRecipient(ctx context.Context, r bridge.Recipient) error {
	if q.opts.Checker == nil || r.Kind != bridge.RecipientPhone {
		return nil
	}
	c, err := q.opts.Checker.Contact(ctx, r.ID)
	if err != nil {
		return err
	}
	if !c.OnWhatsApp {
		return bridge.ErrNotOnWhatsApp
	}
	return nil
}

// outcome is plan, but a permanent failure ends the message at once with
// its reason as the last error.
func outcome(attempts int, sendErr error, schedule []time.Duration, now time.Time) (bridge.Status, sql.NullInt64, string) {
	if reason, ok := bridge.PermanentFailure(sendErr); ok {
		return bridge.StatusFailed, sql.NullInt64{}, reason
	}
	return plan(attempts, sendErr, schedule, now)
}
