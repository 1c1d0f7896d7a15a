package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// ErrClosed is returned by Batcher.Do after Close.
var ErrClosed = errors.New("store: batcher closed")

// maxBatch bounds how many callers share one transaction, and so how long
// the write lock is held and how much one failed commit takes down.
const maxBatch = 256

// Batcher runs the write transactions of many goroutines, several per SQLite
// transaction (group commit). With synchronous=FULL every commit is an
// fsync; sharing it is what lets the bridge accept thousands of durable
// writes a second on one disk. Each caller's work runs in a savepoint of its
// own, so one caller's error undoes only its own writes.
type Batcher struct {
	db *sql.DB
	// savepoints holds the statements that wrap each request, prepared
	// once: SQLite parses SAVEPOINT and RELEASE as it parses any statement,
	// and two parses a request were a seventh of the writer's CPU in a burst
	// of incoming messages (issue 47).
	savepoints *Statements
	reqs       chan *batchReq
	done       chan struct{}
	once       sync.Once
	mu         sync.RWMutex // guards closed against sends on a closed channel
	closed     bool
	// afterCommit runs after each committed transaction, before its callers
	// hear of it; nil for none.
	afterCommit func()
}

// BatcherOption adjusts a Batcher.
type BatcherOption func(*Batcher)

// AfterCommit has the writer call f after each transaction it committed:
// what watches bridge.db for changes (the dashboard's live pages) hears of
// every durable write without a goroutine per write.
func AfterCommit(f func()) BatcherOption { return func(b *Batcher) { b.afterCommit = f } }

type batchReq struct {
	ctx context.Context
	fn  func(*sql.Tx) error
	err chan error
}

// NewBatcher starts the single writer goroutine of db.
func NewBatcher(db *sql.DB, opts ...BatcherOption) *Batcher {
	b := &Batcher{db: db, savepoints: NewStatements(db), reqs: make(chan *batchReq, maxBatch), done: make(chan struct{})}
	for _, o := range opts {
		o(b)
	}
	go b.loop()
	return b
}

// Do runs fn inside a write transaction and returns once that transaction is
// committed (fn's writes are durable) or fn's error. fn must only use tx and
// must not block on other Do calls.
func (b *Batcher) Do(ctx context.Context, fn func(*sql.Tx) error) error {
	return <-b.Submit(ctx, fn)
}

// Submit is Do without the wait: it queues fn and returns a channel that
// yields Do's result once. Calls from one goroutine run in the order of the
// calls, so a caller can hand over many writes and collect their commits
// later (and share them). Submit waits only while maxBatch requests are
// queued: the back-pressure that bounds a fast caller.
func (b *Batcher) Submit(ctx context.Context, fn func(*sql.Tx) error) <-chan error {
	req := &batchReq{ctx: ctx, fn: fn, err: make(chan error, 1)}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		req.err <- ErrClosed
		return req.err
	}
	select {
	case b.reqs <- req:
		// Once queued, the request is committed or failed whatever ctx does:
		// the caller must learn which, or it could report a stored write as lost.
	case <-ctx.Done():
		req.err <- ctx.Err()
	}
	return req.err
}

// Close stops the writer after the queued requests are done.
func (b *Batcher) Close() {
	b.once.Do(func() {
		b.mu.Lock()
		b.closed = true
		close(b.reqs)
		b.mu.Unlock()
		<-b.done
		_ = b.savepoints.Close()
	})
}

func (b *Batcher) loop() {
	defer close(b.done)
	batch := make([]*batchReq, 0, maxBatch)
	for first := range b.reqs {
		batch = append(batch[:0], first)
	collect:
		for len(batch) < maxBatch {
			select {
			case req, ok := <-b.reqs:
				if !ok {
					break collect
				}
				batch = append(batch, req)
			default:
				break collect
			}
		}
		b.run(batch)
	}
}

// run commits one batch; every request gets its own error, or the commit's.
func (b *Batcher) run(batch []*batchReq) {
	errs := make([]error, len(batch))
	commitErr := func() error {
		tx, err := b.db.BeginTx(context.Background(), nil)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback() }() // a no-op after Commit
		for i, req := range batch {
			errs[i] = b.runInSavepoint(tx, req)
		}
		return tx.Commit()
	}()
	if commitErr == nil && b.afterCommit != nil {
		b.afterCommit()
	}
	for i, req := range batch {
		if commitErr != nil {
			req.err <- fmt.Errorf("store: commit: %w", commitErr)
			continue
		}
		req.err <- errs[i]
	}
}

const (
	beginItem    = "SAVEPOINT batch_item"
	releaseItem  = "RELEASE batch_item"
	rollbackItem = "ROLLBACK TO batch_item"
)

// runInSavepoint runs req in a savepoint of its own: its error undoes its
// writes and no one else's.
func (b *Batcher) runInSavepoint(tx *sql.Tx, req *batchReq) error {
	if err := req.ctx.Err(); err != nil {
		return err // abandoned before it ran: nothing written
	}
	// Not req.ctx: a request cancelled while it ran must still be undone.
	ctx := context.Background()
	if _, err := b.savepoints.Exec(ctx, tx, beginItem); err != nil {
		return err
	}
	if err := req.fn(tx); err != nil {
		if _, rbErr := b.savepoints.Exec(ctx, tx, rollbackItem); rbErr != nil {
			return errors.Join(err, rbErr)
		}
		_, _ = b.savepoints.Exec(ctx, tx, releaseItem)
		return err
	}
	_, err := b.savepoints.Exec(ctx, tx, releaseItem)
	return err
}
