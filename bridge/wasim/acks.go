package wasim

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
)

// ackLedger holds the stanzas written to a client that it has yet to
// acknowledge. whatsmeow answers each <message>, <receipt>, <notification>
// and <call> with <ack class="tag" id>, a message also (or instead) with a
// <receipt>.
type ackLedger struct {
	mu       sync.Mutex
	awaiting map[ackKey]struct{}
}

type ackKey struct{ class, id string }

// expect records n before it is written: the client may answer before the
// write returns.
func (l *ackLedger) expect(n waBinary.Node) {
	switch n.Tag {
	case "message", "receipt", "notification", "call":
	default:
		return
	}
	id, _ := n.Attrs["id"].(string)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.awaiting == nil {
		l.awaiting = map[ackKey]struct{}{}
	}
	l.awaiting[ackKey{n.Tag, id}] = struct{}{}
}

// settle forgets the stanzas of class with these ids.
func (l *ackLedger) settle(class string, ids ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		delete(l.awaiting, ackKey{class, id})
	}
}

// pending lists what is awaited as "tag/id".
func (l *ackLedger) pending() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.awaiting))
	for k := range l.awaiting {
		out = append(out, k.class+"/"+k.id)
	}
	return out
}

// ackPoll is how often WaitAcked looks again.
const ackPoll = 5 * time.Millisecond

// WaitAcked returns once every client still connected has acknowledged all
// that was written to it, at two looks ackPoll apart (so that an answer the
// server writes on an acknowledgement is seen), or when ctx ends: a client
// that refuses a stanza never acknowledges it. A test calls it before it
// disconnects a client: whatsmeow writes acknowledgements from its own
// goroutines, and closing the socket meanwhile is a data race inside
// whatsmeow (FrameSocket.SendFrame reads the connection without the lock
// FrameSocket.Close writes it under).
//
// The error names the stanzas still unacknowledged when ctx ended.
func (s *Simulator) WaitAcked(ctx context.Context) error {
	tick := time.NewTicker(ackPoll)
	defer tick.Stop()
	for quiet := 0; ; {
		pending := s.unacknowledged()
		if len(pending) > 0 {
			quiet = 0
		} else if quiet++; quiet == 2 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: unacknowledged %v", ctx.Err(), pending)
		case <-tick.C:
		}
	}
}

// unacknowledged lists what the live connections await, sorted.
func (s *Simulator) unacknowledged() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for c := range s.conns {
		if c.ctx.Err() == nil {
			out = append(out, c.acks.pending()...)
		}
	}
	slices.Sort(out)
	return out
}
