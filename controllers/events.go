package controllers

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
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

// statusMemory remembers, per MessagingBridge, the last status written and
// the resourceVersion it was written over. A round that reads that same
// resourceVersion from the cache reads an object from before the write, so
// it takes the written status instead: otherwise it would write the same
// change again, with a new probe time, and bump the resourceVersion at
// steady state.
type statusMemory struct {
	mu      sync.Mutex
	written map[types.NamespacedName]writtenStatus
}

type writtenStatus struct {
	over   string
	status msgbridgev1alpha1.MessagingBridgeStatus
}

func (m *statusMemory) remember(key types.NamespacedName, over string, status msgbridgev1alpha1.MessagingBridgeStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.written == nil {
		m.written = map[types.NamespacedName]writtenStatus{}
	}
	m.written[key] = writtenStatus{over: over, status: *status.DeepCopy()}
}

// catchUp replaces a stale cached status of mb with the one written over it.
func (m *statusMemory) catchUp(mb *msgbridgev1alpha1.MessagingBridge) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w, ok := m.written[client.ObjectKeyFromObject(mb)]; ok && w.over == mb.ResourceVersion {
		mb.Status = *w.status.DeepCopy()
	}
}

func (m *statusMemory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.written, key)
}
