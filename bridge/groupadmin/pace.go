// Package groupadmin is the use case of group administration beside the
// send queue: each group action is one query to WhatsApp, carried out at
// once (never queued), paced by its own budget (GROUP_ACTION_RATE), and
// idempotent under an Idempotency-Key whose answer is kept in the sends'
// key table (sendqueue.Answers). Doors read a request, hand its action to
// Actions.Do and render what it answers; the session's group methods are
// the doors' port, called inside the action.
package groupadmin

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// maxPaceWait is how long a request waits for its turn in the group
// actions' pace before it is refused with a Retry-After instead.
const maxPaceWait = 30 * time.Second

// jitter stretches a wait for the pace by a random part of up to half an
// interval, as the send queue's pace does.
const jitter = 0.5

// Pace spaces group actions (GROUP_ACTION_RATE): WhatsApp bans accounts
// that add many people quickly, so an action costs a token per
// participant it names, a burst of bridge.GroupActionBurst at most, and an
// action that waits for its turn waits a random part of an interval more,
// so that no two gaps look alike.
type Pace struct {
	budget   *bridge.Budget
	interval time.Duration
	now      func() time.Time
	random   func() float64
	sleep    func(ctx context.Context, d time.Duration) error
}

// NewPace paces at rate (zero: unpaced, tests only) on the clock now.
func NewPace(rate bridge.SendRate, now func() time.Time) *Pace {
	return &Pace{budget: bridge.NewBudget(rate, bridge.GroupActionBurst), interval: rate.Interval(), now: now,
		random: rand.Float64, sleep: sleepCtx}
}

// sleepCtx waits d, or less when ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Admit waits for an action of cost tokens, or refuses it (429,
// group_action_rate_limited, with bridge.RetryAfter) when its turn is over
// maxPaceWait away. A read that asks WhatsApp spends a turn too.
func (p *Pace) Admit(ctx context.Context, cost int) error {
	wait, ok := p.budget.ReserveN(p.now(), max(cost, 1), maxPaceWait)
	if !ok {
		return &bridge.Error{Kind: bridge.KindRateLimited, Code: bridge.CodeGroupActionRateLimited,
			Message: "group actions are paced (GROUP_ACTION_RATE) to keep WhatsApp from banning the account; retry after the Retry-After seconds",
			Err:     bridge.RetryAfter(wait)}
	}
	if wait == 0 {
		return nil
	}
	return p.sleep(ctx, wait+time.Duration(float64(p.interval)*jitter*p.random()))
}
