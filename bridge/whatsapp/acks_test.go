package whatsapp

import (
	"context"
	"errors"
	"slices"
	"strings"
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

// session.db commits without an fsync each (sqlite.OpenSyncedByCaller): a
// batch is acked only after one sync that follows its clears, and a batch
// whose sync failed is not acked at all (WhatsApp delivers it again), since
// its decryptions might not survive a power loss.
func TestAcksWaitForTheSessionSync(t *testing.T) {
	a := newAcks()
	log := &ackLog{}
	syncErr := make(chan error, 2)
	a.syncSession = func() error {
		cleared, acked, _ := log.snapshot()
		log.add(&log.cleared, "sync after "+strings.Join(cleared, ",")+" acked "+strings.Join(acked, ","))
		return <-syncErr
	}
	deferAck := a.deferAck(&store.Device{EventBuffer: &txnBuffer{}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.run(ctx, func(id types.MessageID, _ error) { log.add(&log.failed, id) }, func(error) {})
	}()
	defer func() { cancel(); <-done }()
	send := func(id string) {
		info := &types.MessageInfo{ID: id}
		stored := make(chan error, 1)
		stored <- nil
		a.handed(info, stored)
		deferAck(info, func(context.Context) { log.add(&log.cleared, id) }, func() { log.add(&log.acked, id) })
	}
	syncErr <- errors.New("EIO")
	send("m1")
	testutil.Eventually(t, 5*time.Second, func() bool { _, _, failed := log.snapshot(); return len(failed) == 1 },
		"m1 refused after its sync failed")
	syncErr <- nil
	send("m2")
	testutil.Eventually(t, 5*time.Second, func() bool { _, acked, _ := log.snapshot(); return len(acked) == 1 },
		"m2 acked")
	cleared, acked, failed := log.snapshot()
	want := []string{"m1", "sync after m1 acked ", "m2", "sync after m1,sync after m1 acked ,m2 acked "}
	if !slices.Equal(cleared, want) || !slices.Equal(acked, []string{"m2"}) || !slices.Equal(failed, []string{"m1"}) {
		t.Errorf("clears and syncs %q, acked %v, refused %v", cleared, acked, failed)
	}
}
