package inbox

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/ncruces/go-sqlite3"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/bridge/sqlite"
	"github.com/msgbridge/msgbridge/bridge/webhook"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// BenchmarkIncomingStore: b.N texts from 4 contacts (each named by its
// LID and its number, as WhatsApp names them now) stored as the link
// stores them, one Submit each, in order, with up to 1,024 waiting for
// their commit (the unacked window), and delivered to a loopback webhook
// receiver: the bridge's own store and webhook delivery per incoming
// message, without WhatsApp's decryption. It reports the rate from the
// first store to the last arrival, the process's CPU time per message
// (user and system; the receiver's share included), and the pages and the
// transactions bridge.db wrote to its write-ahead log per message.
//
//	go test -run=NONE -bench=IncomingStore -benchtime=20000x -count=3 ./bridge/inbox
func BenchmarkIncomingStore(b *testing.B) {
	frames := countWALFrames()
	db := testutil.OpenBridgeDB(b)
	batcher := sqlite.NewBatcher(db)
	b.Cleanup(batcher.Close)
	var arrived atomic.Int64
	want := atomic.Int64{}
	done := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		if arrived.Add(1) == want.Load() {
			once.Do(func() { close(done) })
		}
	}))
	b.Cleanup(srv.Close)
	outbox := webhook.New(webhook.Options{DB: db, Batcher: batcher, URL: srv.URL, Log: logr.Discard(), LocalTargets: true})
	in := New(Options{DB: db, Batcher: batcher, Webhooks: outbox, Retention: 720 * time.Hour, Log: logr.Discard(),
		Identities: NewIdentityBook()})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = outbox.Run(ctx); close(stopped) }()
	b.Cleanup(func() { cancel(); <-stopped })

	const contacts = 4
	want.Store(int64(contacts + b.N))
	storeBurst(b, batcher, in, contacts, "warm-up", contacts) // every statement prepared, every pair known
	b.ResetTimer()
	cpu0, frames0, start := cpuTime(), frames.Load(), time.Now()
	commits0 := walCommits.Load()
	storeBurst(b, batcher, in, contacts, "m", b.N)
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		b.Fatalf("%d of %d delivered", arrived.Load()-contacts, b.N)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msg/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/msg")
	b.ReportMetric(float64(frames.Load()-frames0)/float64(b.N), "pages/msg")
	b.ReportMetric(float64(walCommits.Load()-commits0)/float64(b.N), "commits/msg")
}

// storeBurst stores n texts round-robin from the contacts, one Submit
// each, with up to 1,024 awaiting their commit, and waits for the last.
func storeBurst(b *testing.B, batcher *sqlite.Batcher, in *Inbox, contacts int, prefix string, n int) {
	ctx := context.Background()
	pending := make(chan (<-chan error), 1024)
	failed := make(chan error, 1)
	go func() {
		defer close(failed)
		for ch := range pending {
			if err := <-ch; err != nil {
				failed <- err
				for range pending { //nolint:revive // drain: the sender must not block
				}
				return
			}
		}
	}()
	for i := range n {
		c := i % contacts
		phone := bridge.PhoneRecipient(fmt.Sprintf("49151000020%02d", c))
		msg := bridge.Incoming{WhatsAppID: fmt.Sprintf("3EB0%s%08X", prefix, i*2654435761%(1<<32)), From: phone,
			FromPhone: phone, FromLID: bridge.Recipient{Kind: bridge.RecipientLID, ID: fmt.Sprintf("1000000%02d", c)},
			Chat: phone, PushName: "Contact", Type: "text", Text: fmt.Sprintf("burst message number %d from a contact", i),
			Timestamp: time.Now()}
		pending <- batcher.Submit(ctx, func(tx *sql.Tx) error { return in.Store(ctx, tx, msg) })
	}
	close(pending)
	if err := <-failed; err != nil {
		b.Fatal(err)
	}
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var (
	walFramesOnce sync.Once
	walFrames     atomic.Int64
	walLast       atomic.Int64
	walCommits    atomic.Int64
)

// countWALFrames counts the pages every connection opened from now on
// commits to its write-ahead log, and the commits (walCommits); the hook
// also checkpoints at SQLite's default of 1,000 pages, which a WAL hook of
// its own replaces. Commits to one database are serial, so the log's size
// after each one, less the size after the one before (or from 0 when the
// log started over), is what it wrote. One database at a time.
func countWALFrames() *atomic.Int64 {
	walFramesOnce.Do(func() {
		sqlite3.AutoExtension(func(c *sqlite3.Conn) error {
			c.WALHook(func(db *sqlite3.Conn, schema string, pages int) error {
				walCommits.Add(1)
				last := walLast.Swap(int64(pages))
				if int64(pages) > last {
					walFrames.Add(int64(pages) - last)
				} else {
					walFrames.Add(int64(pages))
				}
				if pages >= 1000 {
					_, _, _ = db.WALCheckpoint(schema, sqlite3.CHECKPOINT_PASSIVE)
				}
				return nil
			})
			return nil
		})
	})
	return &walFrames
}
