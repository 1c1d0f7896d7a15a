package apikeys

import (
	"sync"
	"time"

	"github.com/msgbridge/msgbridge/bridge"
)

// budgetWindow is the period a key's budget counts over.
const budgetWindow = time.Hour

// budgets counts each key's sends over the last hour, in memory: a restart
// forgets them, which at worst lets a key send one more hour's budget
// (the account's pace still holds).
type budgets struct {
	now func() time.Time
	mu  sync.Mutex
	// sent holds, per key, the times of its sends in the window, oldest
	// first.
	sent map[string][]time.Time
}

func newBudgets(now func() time.Time) *budgets {
	return &budgets{now: now, sent: map[string][]time.Time{}}
}

// Spend counts n messages of caller c against its hourly budget. Over it,
// nothing is counted and the answer is bridge.ErrOverBudget with how long
// until enough of the window's sends age out.
func (k *Keys) Spend(c bridge.Caller, n int) (retryAfter time.Duration, err error) {
	if c.Budget == 0 || n <= 0 {
		return 0, nil
	}
	return k.budgets.spend(c.Name, c.Budget, n)
}

func (b *budgets) spend(name string, budget, n int) (time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	sent := b.sent[name]
	for len(sent) > 0 && !sent[0].Add(budgetWindow).After(now) {
		sent = sent[1:]
	}
	if len(sent)+n > budget {
		b.sent[name] = sent
		if n > budget {
			return budgetWindow, bridge.ErrOverBudget
		}
		// The send fits once len(sent)+n-budget of the oldest age out.
		return sent[len(sent)+n-budget-1].Add(budgetWindow).Sub(now), bridge.ErrOverBudget
	}
	for range n {
		sent = append(sent, now)
	}
	b.sent[name] = sent
	return 0, nil
}

func (b *budgets) forget(name string) {
	b.mu.Lock()
	delete(b.sent, name)
	b.mu.Unlock()
}
