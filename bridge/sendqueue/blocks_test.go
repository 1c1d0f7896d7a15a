package sendqueue

import (
	"sync"
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// blockedSet is the BlockList port: the recipients the account blocked.
type blockedSet struct {
	mu  sync.Mutex
	set map[bridge.Recipient]bool
}

func (b *blockedSet) Blocked(r bridge.Recipient) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.set[r]
}

func (b *blockedSet) put(r bridge.Recipient, blocked bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set[r] = blocked
}

// A request to a blocked contact is refused with contact_blocked before
// anything is stored or sent; once unblocked it is accepted.
func TestSubmitRefusesABlockedContact(t *testing.T) {
	blocks := &blockedSet{set: map[bridge.Recipient]bool{}}
	f := newFixture(t)
	f.open(func(_ *MessageLogOptions, o *Options) { o.Blocks = blocks })
	req := textRequest("hello")
	blocks.put(req.Recipient, true)
	_, err := f.q.Submit(t.Context(), req)
	wantError(t, err, bridge.KindConflict, bridge.CodeContactBlocked)
	if n := f.count(`SELECT count(*) FROM messages`); n != 0 || len(f.sender.calls()) != 0 {
		t.Errorf("%d messages stored, %d sent to a blocked contact", n, len(f.sender.calls()))
	}
	blocks.put(req.Recipient, false)
	if res := f.submit(req); res.Messages[0].Status != bridge.StatusSent {
		t.Errorf("after the unblock: %+v", res.Messages[0])
	}
}
