package whatsapp

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"

	"github.com/msgbridge/msgbridge/internal/testutil"
)

// txnBuffer is a decrypted-event buffer that counts its transactions.
type txnBuffer struct {
	store.EventBuffer
	mu   sync.Mutex
	txns int
}

func (b *txnBuffer) DoDecryptionTxn(ctx context.Context, fn func(context.Context) error) error {
	b.mu.Lock()
	b.txns++
	b.mu.Unlock()
	return fn(ctx)
}

// ackLog records what the acks did, in order.
type ackLog struct {
	mu      sync.Mutex
	cleared []string
	acked   []string
	failed  []string
}

func (l *ackLog) add(list *[]string, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	*list = append(*list, id)
}

func (l *ackLog) snapshot() (cleared, acked, failed []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.cleared), slices.Clone(l.acked), slices.Clone(l.failed)
}

// A message is acked only once its store committed, never when the store
// failed, and in the order the messages came; the plaintexts of messages
// queued together are cleared in one transaction.
func TestAcksWaitForTheCommitInOrder(t *testing.T) {
	a := newAcks()
	buf := &txnBuffer{}
	log := &ackLog{}
	var mu sync.Mutex
	committed := map[string]bool{}
	commits := map[string]chan error{}
	deferAck := a.deferAck(&store.Device{EventBuffer: buf})
	for _, id := range []string{"m1", "m2", "m3", "m4"} {
		info := &types.MessageInfo{ID: id}
		commits[id] = make(chan error, 1)
		a.handed(info, commits[id])
		deferAck(info, func(context.Context) { log.add(&log.cleared, id) }, func() {
			mu.Lock()
			early := !committed[id]
			mu.Unlock()
			if early {
				t.Errorf("%s acked before its commit", id)
			}
			log.add(&log.acked, id)
		})
	}
	commit := func(id string, err error) {
		mu.Lock()
		committed[id] = err == nil
		mu.Unlock()
		commits[id] <- err
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.run(ctx, func(id types.MessageID, _ error) { log.add(&log.failed, id) }, func(error) {})
	}()
	defer func() { cancel(); <-done }()
	commit("m2", nil) // before m1: still acked after m1
	commit("m1", nil)
	commit("m3", errors.New("disk full"))
	commit("m4", nil)
	testutil.Eventually(t, 5*time.Second, func() bool {
		_, acked, failed := log.snapshot()
		return len(acked)+len(failed) == 4
	}, "every message acked or refused")
	cleared, acked, failed := log.snapshot()
	if want := []string{"m1", "m2", "m4"}; !slices.Equal(acked, want) || !slices.Equal(cleared, want) {
		t.Errorf("acked %v, cleared %v; want %v", acked, cleared, want)
	}
	if !slices.Equal(failed, []string{"m3"}) {
		t.Errorf("refused %v, want [m3]", failed)
	}
	buf.mu.Lock()
	defer buf.mu.Unlock()
	if buf.txns != 1 {
		t.Errorf("%d clearing transactions for the messages queued together, want 1", buf.txns)
	}
}
