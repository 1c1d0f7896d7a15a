package sendqueue

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// jitterSpan stretches each gap between two attempts by a random part of up
// to half the rate's interval. Gaps never shrink below the interval, so
// SEND_RATE is a ceiling that no window of attempts exceeds; on average the
// account sends at 1/1.25 of it, with no two gaps alike (a machine's
// metronome is what WhatsApp's spam detection looks for).
const jitterSpan = 0.5

// pacer spaces the queue's attempts (SEND_RATE): the immediate attempt of a
// request and every retry wait for it, and it never makes either earlier.
type pacer struct {
	interval time.Duration // 0: unpaced
	random   func() float64

	mu   sync.Mutex
	next time.Time // the earliest start of the next attempt
}

func newPacer(rate bridge.SendRate) *pacer {
	return &pacer{interval: rate.Interval(), random: rand.Float64}
}

// paceGap is the pause after an attempt: the interval stretched by u (0 to
// 1) times the jitter span.
func paceGap(interval time.Duration, u float64) time.Duration {
	return interval + time.Duration(float64(interval)*jitterSpan*u)
}

// take books an attempt starting at now when the pace allows one, and
// reports whether it did.
func (p *pacer) take(now time.Time) bool {
	if p.interval == 0 {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Before(p.next) {
		return false
	}
	p.next = now.Add(paceGap(p.interval, p.random()))
	return true
}

// readyAt is the earliest time take can book an attempt.
func (p *pacer) readyAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.next
}

// postpone moves the next booking later by d: the time an attempt spent
// preparing (reading its row, checking the number) before it reached
// WhatsApp, so that what WhatsApp sees, the gap between two sends, is never
// shorter than the pace even when one preparation takes longer than the
// next.
func (p *pacer) postpone(d time.Duration) {
	if p.interval == 0 || d <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next = p.next.Add(d)
}
