package mcp

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/msgbridge/msgbridge/bridge"
)

// callerHeader carries, from the door's key check to the tool and resource
// handlers, a reference to who is calling: the SDK hands a handler the
// request's headers, not its context. The reference is the door's own, set
// on every request after the check and stripped from what a client sends;
// a handler that finds none acts for nobody (no scope, no chat).
const callerHeader = "X-Msgbridge-Mcp-Caller"

// callers are the callers of the requests being served, by reference.
type callers struct {
	mu    sync.Mutex
	next  uint64
	byRef map[string]bridge.Caller
}

// put keeps c for one request and returns its reference.
func (cs *callers) put(c bridge.Caller) string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.byRef == nil {
		cs.byRef = map[string]bridge.Caller{}
	}
	cs.next++
	ref := strconv.FormatUint(cs.next, 36)
	cs.byRef[ref] = c
	return ref
}

// drop forgets the caller of a request that ended.
func (cs *callers) drop(ref string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.byRef, ref)
}

// of is the caller whose request carried h.
func (cs *callers) of(h http.Header) bridge.Caller {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.byRef[h.Get(callerHeader)]
}
