package groupadmin

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sendqueue"
)

// Answers keeps group actions' answers under their Idempotency-Key, in the
// sends' key table and window (*sendqueue.Answers).
type Answers interface {
	Claim(ctx context.Context, key, reqHash string) (*sendqueue.Answer, error)
	Keep(ctx context.Context, key string, res sendqueue.Answer) error
	Release(ctx context.Context, key string) error
}

// Action is one administrative request as a door read it.
type Action struct {
	// Key is its Idempotency-Key, checked (sendqueue.ParseIdempotencyKey);
	// "": none. Hash identifies the request, so that the key sent with
	// another request is refused (idempotency_key_reused).
	Key, Hash string
	// Cost is its turns of the pace: one per participant it names, at
	// least one.
	Cost int
	// Run asks WhatsApp and returns the door's answer to what it did.
	Run func(ctx context.Context) (sendqueue.Answer, error)
	// Refused is the door's answer to a refusal by WhatsApp (not an
	// admin, no such group), kept for the key's repeats.
	Refused func(error) sendqueue.Answer
}

// Actions carries out group actions: one per key at a time, a repeat of a
// key answered as its first request was, the others paced, then asked of
// WhatsApp, never retried.
type Actions struct {
	// Pace spends a turn per participant; reads that ask WhatsApp spend
	// one too.
	Pace    *Pace
	answers Answers
	keys    keyLocks
	log     logr.Logger
}

// New paces actions at rate (GROUP_ACTION_RATE; zero: unpaced, tests only)
// and keeps their answers in answers (nil: a request with a key fails,
// tests only).
func New(answers Answers, rate bridge.SendRate, now func() time.Time, log logr.Logger) *Actions {
	return &Actions{Pace: NewPace(rate, now), answers: answers, log: log}
}

// errInFlight refuses a key whose first request is still being carried
// out: its answer is not known yet.
var errInFlight = bridge.Errorf(bridge.KindConflict, bridge.CodeIdempotencyKeyInFlight,
	"a request with this Idempotency-Key is being carried out; repeat it once that one answered")

// errNoAnswers: a key came to Actions made without a keeper of answers,
// which only a test does.
var errNoAnswers = bridge.Internal(bridge.CodeStoreFailed, "this bridge keeps no answers of group actions", nil)

// Do carries out a, or answers the first answer of its key. An answer
// WhatsApp gave (a success or its refusal) is kept under the key; a
// request that never reached it (paced, not linked, a fault of the bridge)
// frees the key for a repeat.
func (s *Actions) Do(ctx context.Context, a Action) (sendqueue.Answer, error) {
	if a.Key == "" {
		return s.run(ctx, a)
	}
	if s.answers == nil {
		return sendqueue.Answer{}, errNoAnswers
	}
	if !s.keys.try(a.Key) {
		return sendqueue.Answer{}, errInFlight
	}
	defer s.keys.release(a.Key)
	kept, err := s.answers.Claim(ctx, a.Key, a.Hash)
	if err != nil {
		return sendqueue.Answer{}, err
	}
	if kept != nil {
		return *kept, nil
	}
	answer, err := s.run(ctx, a)
	s.settle(context.WithoutCancel(ctx), a, answer, err)
	return answer, err
}

// run paces a and asks WhatsApp.
func (s *Actions) run(ctx context.Context, a Action) (sendqueue.Answer, error) {
	if err := s.Pace.Admit(ctx, a.Cost); err != nil {
		return sendqueue.Answer{}, err
	}
	return a.Run(ctx)
}

// settle keeps the answer under a's key, or frees the key when the action
// never reached WhatsApp.
func (s *Actions) settle(ctx context.Context, a Action, answer sendqueue.Answer, err error) {
	if err != nil {
		switch bridge.ErrorKind(err) {
		case bridge.KindRateLimited, bridge.KindUnavailable, bridge.KindTimeout, bridge.KindInternal:
			if err := s.answers.Release(ctx, a.Key); err != nil {
				s.log.Error(err, "free idempotency key")
			}
			return
		default:
		}
		answer = a.Refused(err)
	}
	if err := s.answers.Keep(ctx, a.Key, answer); err != nil {
		s.log.Error(err, "store idempotent response")
	}
}

// keyLocks runs one request per Idempotency-Key at a time in this process.
type keyLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

func (k *keyLocks) try(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held == nil {
		k.held = map[string]bool{}
	}
	if k.held[key] {
		return false
	}
	k.held[key] = true
	return true
}

func (k *keyLocks) release(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.held, key)
}
