package webhook

import (
	"context"
	"fmt"
	"time"
)

// Health states.
const (
	HealthHealthy  = "healthy"
	HealthFailing  = "failing"
	HealthDisabled = "disabled"
)

// Health is how a subscription's deliveries go. The last outcomes are
// those since the process started (zero: none yet).
type Health struct {
	State                string
	Pending, DeadLetters int
	LastSuccess          time.Time
	LastFailure          time.Time
	LastError            string
}

// Status is a subscription with its health.
type Status struct {
	Subscription
	Health Health
}

const countsBySubscription = `SELECT subscription, status, count(*) FROM webhook_outbox
	WHERE status IN ('pending', 'dead') GROUP BY subscription, status`

// List is every subscription with its health, ordered by id.
func (o *Outbox) List(ctx context.Context) ([]Status, error) {
	all, err := o.readSubscriptions(ctx)
	if err != nil {
		return nil, err
	}
	counts, err := o.counts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Status, len(all))
	for i, s := range all {
		out[i] = Status{Subscription: s, Health: o.health(s, counts[s.ID])}
	}
	return out, nil
}

// Get is subscription id with its health; ErrNoSubscription when absent.
func (o *Outbox) Get(ctx context.Context, id string) (Status, error) {
	all, err := o.List(ctx)
	if err != nil {
		return Status{}, err
	}
	for _, s := range all {
		if s.ID == id {
			return s, nil
		}
	}
	return Status{}, ErrNoSubscription
}

// counts are the pending and dead rows per subscription.
func (o *Outbox) counts(ctx context.Context) (map[string][2]int, error) {
	rows, err := o.opts.DB.QueryContext(ctx, countsBySubscription)
	if err != nil {
		return nil, fmt.Errorf("count subscription events: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[string][2]int{}
	for rows.Next() {
		var (
			id, status string
			n          int
		)
		if err := rows.Scan(&id, &status, &n); err != nil {
			return nil, err
		}
		c := out[id]
		if status == "pending" {
			c[0] = n
		} else {
			c[1] = n
		}
		out[id] = c
	}
	return out, rows.Err()
}

func (o *Outbox) health(s Subscription, counts [2]int) Health {
	st := o.state(s.ID)
	st.mu.Lock()
	h := Health{Pending: counts[0], DeadLetters: counts[1], LastSuccess: st.lastOK, LastFailure: st.lastFail, LastError: st.lastErr}
	st.mu.Unlock()
	switch {
	case !s.Enabled:
		h.State = HealthDisabled
	case h.LastFailure.After(h.LastSuccess):
		h.State = HealthFailing
	default:
		h.State = HealthHealthy
	}
	return h
}
