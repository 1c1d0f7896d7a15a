package sendqueue

import (
	"context"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
)

// Submitter is what the send use case needs of the queue (*Queue).
type Submitter interface {
	Submit(ctx context.Context, req Request) (Result, error)
	StoreResponse(ctx context.Context, key string, resp StoredResponse) error
}

// Render is a door's answer to what the queue did with a request; it is
// stored under the request's idempotency key, so a repeat of the key gets
// the very same answer.
type Render func(Result) (StoredResponse, error)

// Sending is the one use case of sending, whichever door a request came
// in by (the form of POST /send, the JSON of POST /api/messages, the Cloud
// API's): validated once, queued, and idempotent end to end, from claiming
// the key to storing the door's answer for its repeats.
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
func (s Sending) Send(ctx context.Context, d Draft, render Render) (StoredResponse, error) {
	req, err := d.Validate()
	if err != nil {
		d.discard()
		return StoredResponse{}, err
	}
	return s.Submit(ctx, req, render)
}

// Submit queues a valid request (a send, or an action a door built) and
// returns the door's answer: the stored one for a repeat of the key,
// otherwise render's, which is stored under the key.
func (s Sending) Submit(ctx context.Context, req Request, render Render) (StoredResponse, error) {
	if err := s.authorize(ctx, req); err != nil {
		req.discard()
		return StoredResponse{}, err
	}
	req = held(ctx, req)
	res, err := s.Queue.Submit(ctx, req)
	if err != nil {
		req.discard()
		if bridge.ErrorKind(err) != bridge.KindInternal {
			return StoredResponse{}, err // the queue's own verdict, e.g. idempotency_key_reused
		}
		return StoredResponse{}, bridge.Internal(bridge.CodeStoreFailed, "the request could not be stored; nothing will be sent", err)
	}
	if res.Replay && res.Stored != nil {
		return *res.Stored, nil
	}
	answer, err := render(res)
	if err != nil {
		return StoredResponse{}, err
	}
	if req.IdempotencyKey != "" && !res.Replay {
		if err := s.Queue.StoreResponse(context.WithoutCancel(ctx), req.IdempotencyKey, answer); err != nil {
			s.Log.Error(err, "store idempotent response") // a repeat then answers from the messages
		}
	}
	return answer, nil
}

// discard deletes the request's spooled files, when the queue did not take
// them.
func (r Request) discard() {
	for _, it := range r.Items {
		it.File.Discard()
	}
}
