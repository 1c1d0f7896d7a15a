package whatsapp

import (
	"context"
	"errors"
	"sync"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
)

// maxUnacked bounds the messages handed to the store whose acks wait for
// their commit. When it is reached the handler waits, so whatsmeow's handler
// queue and then the socket hold the rest (back-pressure, not memory).
const maxUnacked = 1024

// acks sends each incoming message's ack once its store has committed,
// while the handler has already moved on to the next message: the store
// (Events.Incoming) takes several messages per transaction, so they share
// an fsync, and so do the clears of their plaintexts in whatsmeow's
// decrypted-event buffer. Acks go out in the order the messages came, from
// one goroutine.
type acks struct {
	// syncSession writes the decryptions held in memory (signalstore.go) to
	// session.db and makes its commits so far durable (sqlite.SyncWAL): a
	// decrypted message moved its Signal session past it, so a batch's acks
	// wait for one write and one fsync of them all. nil syncs nothing (tests).
	syncSession func() error
	mu          sync.Mutex
	stored      map[messageKey][]<-chan error // handed to the store, ack not yet deferred
	queue       chan ackJob
	stopped     chan struct{} // closed when run ends: nothing more is acked
}

type messageKey struct{ chat, id string }

// ackJob is one message's ack: sent when every store of the message
// committed (a message can carry several events), never when one failed.
type ackJob struct {
	id     types.MessageID
	stored []<-chan error
	buffer store.EventBuffer // whatsmeow's decrypted-event buffer, which clear writes
	clear  func(context.Context)
	ack    func()
}

func newAcks() *acks {
	return &acks{stored: map[messageKey][]<-chan error{}, queue: make(chan ackJob, maxUnacked), stopped: make(chan struct{})}
}

func keyOf(info *types.MessageInfo) messageKey {
	return messageKey{info.Chat.String(), info.ID}
}

// handed notes that the message of info went to the store, which reports
// its commit on stored.
func (a *acks) handed(info *types.MessageInfo, stored <-chan error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := keyOf(info)
	a.stored[k] = append(a.stored[k], stored)
}

// deferAck is whatsmeow's DeferMessageAck for a client of device: it queues
// the message's clear and ack behind its stores; a message the handler did
// not store is acked in turn too. It waits while maxUnacked are queued.
func (a *acks) deferAck(device *store.Device) func(*types.MessageInfo, func(context.Context), func()) {
	return func(info *types.MessageInfo, clear func(context.Context), ack func()) {
		a.mu.Lock()
		k := keyOf(info)
		stored := a.stored[k]
		delete(a.stored, k)
		a.mu.Unlock()
		select {
		// The device's stores are set by the time it receives messages (an
		// unlinked device gets them when it pairs).
		case a.queue <- ackJob{id: info.ID, stored: stored, buffer: device.EventBuffer, clear: clear, ack: ack}:
		case <-a.stopped: // shutting down: unacked, WhatsApp delivers it again
		}
	}
}

// sync makes the batch's decryptions durable before it is acked: the
// session.db transactions that decrypted the messages (their ratchets'
// steps and buffered plaintexts) and the clears just committed.
func (a *acks) sync() error {
	if a.syncSession == nil {
		return nil
	}
	return a.syncSession()
}

// maxAckBatch bounds how many messages' buffered plaintexts are cleared in
// one transaction of session.db.
const maxAckBatch = 256

// run acks the queued messages in order until ctx ends: those queued
// together have their plaintexts cleared, their decryptions and the clears
// written to session.db in one transaction with one fsync (as their stores
// shared one in bridge.db), then their receipts sent. failed is told of a message whose store failed, which stays unacked.
func (a *acks) run(ctx context.Context, failed func(types.MessageID, error), clearFailed func(error)) {
	defer close(a.stopped)
	batch := make([]ackJob, 0, maxAckBatch)
	for {
		select {
		case <-ctx.Done():
			return
		case job := <-a.queue:
			batch = a.collect(append(batch[:0], job), failed)
			if err := clearAll(ctx, batch); err != nil && ctx.Err() == nil {
				clearFailed(err) // the plaintexts stay until whatsmeow's sweep; the acks still go
			}
			if err := a.sync(); err != nil {
				// Unacked, WhatsApp delivers them again: their sessions' and
				// plaintexts' commits may not survive a power loss.
				for _, job := range batch {
					failed(job.id, err)
				}
				continue
			}
			for _, job := range batch {
				job.ack()
			}
		}
	}
}

// collect adds the jobs queued behind batch's first, up to maxAckBatch, and
// keeps those whose stores committed.
func (a *acks) collect(batch []ackJob, failed func(types.MessageID, error)) []ackJob {
more:
	for len(batch) < maxAckBatch {
		select {
		case job := <-a.queue:
			batch = append(batch, job)
		default:
			break more
		}
	}
	kept := batch[:0]
	for _, job := range batch {
		if err := firstErr(job.stored); err != nil {
			failed(job.id, err)
			continue
		}
		kept = append(kept, job)
	}
	return kept
}

// clearAll clears the jobs' buffered plaintexts, in one transaction per
// buffer (one, but for the jobs of a client replaced meanwhile).
func clearAll(ctx context.Context, jobs []ackJob) error {
	var errs []error
	for start := 0; start < len(jobs); {
		end := start + 1
		for end < len(jobs) && jobs[end].buffer == jobs[start].buffer {
			end++
		}
		run := jobs[start:end]
		errs = append(errs, run[0].buffer.DoDecryptionTxn(ctx, func(ctx context.Context) error {
			for _, job := range run {
				job.clear(ctx)
			}
			return nil
		}))
		start = end
	}
	return errors.Join(errs...)
}

// firstErr waits for every outcome and returns the first error.
func firstErr(outcomes []<-chan error) error {
	var first error
	for _, c := range outcomes {
		if err := <-c; err != nil && first == nil {
			first = err
		}
	}
	return first
}
