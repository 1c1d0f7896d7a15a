package sendqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
)

// Submitter is what the send use case needs of the queue (*Queue).
type Submitter interface {
	Submit(ctx context.Context, req Request) (Result, error)
	StoreOutcome(ctx context.Context, key string, o Outcome) error
}

// Sending is the one use case of sending, whichever door a request came
// in by (the form of POST /send, the JSON of POST /api/messages, the Cloud
// API's): validated once, queued, and idempotent end to end, from claiming
// the key to storing the outcome for its repeats. It answers with the
// outcome, which each door renders in its own shape, a repeat's too: a key
// first used through one door replays through another in that one's shape.
type Sending struct {
	Queue Submitter
	Log   logr.Logger
	// Budget counts the sends of keys with an hourly budget
	// (*apikeys.Keys); nil: no key has one.
	Budget Budget
}

// Budget counts a caller's sends against its hourly budget; over it, the
// error carries the wait (bridge.OverBudget).
type Budget interface {
	Spend(c bridge.Caller, messages int) (time.Duration, error)
}

// Send validates d and submits it. On any error the draft's spooled files
// are deleted: only an accepted request hands them to the queue.
func (s Sending) Send(ctx context.Context, d Draft) (Outcome, error) {
	req, err := d.Validate()
	if err != nil {
		d.discard()
		return Outcome{}, err
	}
	return s.Submit(ctx, req)
}

// Submit queues a valid request (a send, or an action a door built) and
// returns its outcome: the stored one for a repeat of the key, otherwise
// the queue's, which is stored under the key.
func (s Sending) Submit(ctx context.Context, req Request) (Outcome, error) {
	if err := s.authorize(ctx, req); err != nil {
		req.discard()
		return Outcome{}, err
	}
	req = held(ctx, req)
	res, err := s.Queue.Submit(ctx, req)
	if err != nil {
		req.discard()
		if bridge.ErrorKind(err) != bridge.KindInternal {
			return Outcome{}, err // the queue's own verdict, e.g. idempotency_key_reused
		}
		return Outcome{}, bridge.Internal(bridge.CodeStoreFailed, "the request could not be stored; nothing will be sent", err)
	}
	if res.Replay && res.Stored != nil {
		return *res.Stored, nil
	}
	out := OutcomeOf(res)
	if len(out.Messages) != len(req.Items) && !res.Replay {
		// The messages are stored and will be sent: answering a failure
		// here would have a client without a key send them again.
		s.Log.Error(fmt.Errorf("%d messages for %d items", len(out.Messages), len(req.Items)), "a stored request's outcome is short")
	}
	if req.IdempotencyKey != "" && !res.Replay {
		if err := s.Queue.StoreOutcome(context.WithoutCancel(ctx), req.IdempotencyKey, out); err != nil {
			s.Log.Error(err, "store idempotent outcome") // a repeat then answers from the messages
		}
	}
	return out, nil
}

// discard deletes the request's spooled files, when the queue did not take
// them.
func (r Request) discard() {
	for _, it := range r.Items {
		it.File.Discard()
	}
}
