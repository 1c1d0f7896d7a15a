package controllers

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// eventMemory remembers, per MessagingBridge and condition type, the last
// transition reported as an event. The status the reconciler compares with
// comes from the cache, which may not show the status it wrote a moment
// ago; without this memory a second round would report the same transition
// again (the first Stalled event was emitted twice).
type eventMemory struct {
	mu   sync.Mutex
	last map[types.NamespacedName]emitted
}

type emitted struct {
	uid types.UID
	// byType maps a condition type to "status/reason".
	byType map[string]string
}

// first records that the transition to state was reported for (key, uid,
// condType), and reports whether it had not been already. A new object of
// the same name starts afresh.
func (m *eventMemory) first(key types.NamespacedName, uid types.UID, condType, state string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		m.last = map[types.NamespacedName]emitted{}
	}
	e, ok := m.last[key]
	if !ok || e.uid != uid {
		e = emitted{uid: uid, byType: map[string]string{}}
		m.last[key] = e
	}
	if e.byType[condType] == state {
		return false
	}
	e.byType[condType] = state
	return true
}

func (m *eventMemory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.last, key)
}
