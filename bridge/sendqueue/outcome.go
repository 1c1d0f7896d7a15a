package sendqueue

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// Outcome is what a request (a send or an action) came to, as every door
// renders it: the JSON API and the form as their JSON, the Cloud door as
// Graph's answer. It is what is kept under the request's Idempotency-Key,
// so that a repeat through any door answers in that door's own shape what
// the first request, through whichever door, came to.
type Outcome struct {
	// Replay: the request repeated an earlier one's key; nothing was sent
	// this time.
	Replay   bool          `json:"-"`
	Messages []OutcomeItem `json:"messages"`
}

// OutcomeItem is one message of an outcome as the first answer saw it.
// Its JSON names are the JSON door's, whose answer bodies were what the key
// table held before outcomes were: a body stored then decodes as an
// outcome (its "error" is left out, a door derives it from the items).
type OutcomeItem struct {
	ID         string             `json:"id"`
	WhatsAppID string             `json:"whatsapp_id"`
	Type       bridge.MessageType `json:"type"`
	Status     bridge.Status      `json:"status"`
	RetryCount int                `json:"retry_count"`
	// Reason is why a Failed message failed (bridge.Message.FailReason).
	Reason string `json:"reason,omitempty"`
	// QueuePosition and ScheduledAt are a Queued message's place in the
	// queue (zero: not known, e.g. in a replay).
	QueuePosition int       `json:"queue_position,omitempty"`
	ScheduledAt   time.Time `json:"scheduled_at,omitzero"`
}

// OutcomeOf is the outcome of a result of the queue.
func OutcomeOf(res Result) Outcome {
	out := Outcome{Replay: res.Replay, Messages: make([]OutcomeItem, len(res.Messages))}
	for i, m := range res.Messages {
		it := OutcomeItem{ID: m.ID, WhatsAppID: m.WhatsAppID, Type: m.Type, Status: m.Status,
			RetryCount: m.RetryCount, Reason: m.FailReason()}
		if i < len(res.Places) && m.Status == bridge.StatusQueued && res.Places[i].Position > 0 {
			it.QueuePosition, it.ScheduledAt = res.Places[i].Position, res.Places[i].ScheduledAt.UTC()
		}
		out.Messages[i] = it
	}
	return out
}

// AllFailed reports an outcome whose every message failed at once (none
// will be sent).
func (o Outcome) AllFailed() bool {
	for _, m := range o.Messages {
		if m.Status != bridge.StatusFailed {
			return false
		}
	}
	return len(o.Messages) > 0
}

// AnyQueued reports an outcome with a message that waits in the queue.
func (o Outcome) AnyQueued() bool {
	for _, m := range o.Messages {
		if m.Status == bridge.StatusQueued || m.Status == bridge.StatusAwaitingApproval {
			return true
		}
	}
	return false
}

// outcomeAnswered is what the key table's status column holds for a key
// whose outcome is stored: any non-zero value marks it answered. It is 200
// so that a bridge rolled back to a version that stored HTTP answers there
// replays the stored outcome as a 200 of the JSON door, whose body shape
// an outcome's JSON is.
const outcomeAnswered = 200

// encodeOutcome is o as the key table keeps it.
func encodeOutcome(o Outcome) []byte {
	b, _ := json.Marshal(o) // plain structs: cannot fail
	return b
}

// decodeOutcome reads a kept outcome, or a JSON door's answer body kept
// before outcomes were.
func decodeOutcome(body []byte) (Outcome, error) {
	var o Outcome
	if err := json.Unmarshal(body, &o); err != nil {
		return Outcome{}, fmt.Errorf("read the outcome kept under the key: %w", err)
	}
	o.Replay = true
	return o, nil
}
